//! The scenario's 13 stages (`shared/reference/scenario.md`), run in order against one cluster and
//! one pair of working folders, as the two teams would live through them. Each stage asserts on
//! the cluster (kubectl), on the engine's saved plan (`show -json`) and on exit codes, and prints
//! `stage N <name>: ok|FAILED`.
//!
//! `BREAK_STAGE=N` breaks stage N's own setup or expectation on purpose and ends the run after
//! it: that stage must then fail (`scripts/break-check.sh` checks all 13).

use std::io::Write as _;
use std::panic::AssertUnwindSafe;
use std::path::Path;
use std::time::{Duration, Instant};

use acceptance::ensure;
use acceptance::records_fixtures::records_namespace;
use acceptance::scenario::{
    Check, Estates, ObjectVersion, applied_counts, estate_of, kill_tree, known_differences, pending, read,
    remove, remove_block, replace_all, resource_change, secret_values, snapshot, snapshot_changes,
    wait_until, write,
};
use acceptance::{Engine, EngineOutput, PlanSummary};
use serde_json::Value;

const GATEWAY_HOST: &str = "gateway.platform.svc.cluster.local";
const GATEWAY_URL: &str = "http://gateway.platform.svc.cluster.local:80";

/// An object of the estates: its address, kubectl resource name, namespace and name.
type Object = (&'static str, &'static str, Option<&'static str>, &'static str);

const NETWORK_OBJECTS: [Object; 5] = [
    ("kubernetes_namespace.platform", "namespaces", None, "platform"),
    (
        "kubernetes_network_policy.default_deny",
        "networkpolicies.networking.k8s.io",
        Some("platform"),
        "default-deny",
    ),
    (
        "kubernetes_service.gateway",
        "services",
        Some("platform"),
        "gateway",
    ),
    (
        "kubernetes_config_map.routes",
        "configmaps",
        Some("platform"),
        "routes",
    ),
    (
        "kubernetes_config_map.limits",
        "configmaps",
        Some("platform"),
        "limits",
    ),
];

const APP_OBJECTS: [Object; 9] = [
    ("kubernetes_namespace.shop", "namespaces", None, "shop"),
    (
        "kubernetes_config_map.app",
        "configmaps",
        Some("shop"),
        "app-config",
    ),
    (
        "kubernetes_config_map.shard[0]",
        "configmaps",
        Some("shop"),
        "shard-0",
    ),
    (
        "kubernetes_config_map.shard[1]",
        "configmaps",
        Some("shop"),
        "shard-1",
    ),
    (
        "kubernetes_service_account.app",
        "serviceaccounts",
        Some("shop"),
        "app",
    ),
    ("kubernetes_service.web", "services", Some("shop"), "web"),
    (
        "kubernetes_deployment.web",
        "deployments.apps",
        Some("shop"),
        "web",
    ),
    (
        "kubernetes_horizontal_pod_autoscaler_v2.web",
        "horizontalpodautoscalers.autoscaling",
        Some("shop"),
        "web",
    ),
    (
        "kubernetes_manifest.handoff",
        "configmaps",
        Some("platform"),
        "handoff",
    ),
];

/// The resource each estate records its outputs with.
const RECORDS: &str = "records_outputs.this";

type Stage = fn(&Estates) -> Check;

const STAGES: [(&str, Stage); 13] = [
    ("greenfield apply", greenfield),
    ("no-op", no_op),
    ("cross-estate read fence", read_fence),
    ("drift", drift),
    ("rename", rename),
    ("remove a block", remove_a_block),
    ("change count", change_count),
    ("create_before_destroy", create_before_destroy),
    ("crash mid-apply", crash_mid_apply),
    ("plan, review, apply", plan_review_apply),
    ("lost state", lost_state),
    ("migrate", migrate),
    ("teardown", teardown),
];

#[test]
fn reference_estates_stage_by_stage() {
    let started = Instant::now();
    let stop_after = break_stage();
    let estates = Estates::start().unwrap_or_else(|e| panic!("setting up the estates failed: {e}"));
    let mut failed = Vec::new();
    for (n, (name, stage)) in (1..).zip(STAGES) {
        let stage_started = Instant::now();
        let result = std::panic::catch_unwind(AssertUnwindSafe(|| stage(&estates)))
            .unwrap_or_else(|panic| Err(format!("panicked: {}", panic_text(&*panic))));
        let took = stage_started.elapsed().as_secs_f64();
        match result {
            Ok(()) => say(&format!("stage {n} {name}: ok ({took:.1} s)")),
            Err(why) => {
                say(&format!(
                    "stage {n} {name}: FAILED ({took:.1} s)\n    {}",
                    why.replace('\n', "\n    ")
                ));
                failed.push(n);
            }
        }
        // Everything after the greenfield apply builds on it; a broken stage ends the run.
        if (n == 1 && !failed.is_empty()) || stop_after == Some(n) {
            break;
        }
    }
    if !failed.is_empty() || stop_after.is_some() {
        clean_up(&estates);
    }
    say(&format!(
        "stages: {} failed, wall time {:.0} s",
        failed.len(),
        started.elapsed().as_secs_f64()
    ));
    if failed.is_empty() {
        return;
    }
    let kept = estates.keep();
    panic!(
        "stages {failed:?} failed; working folders kept in {}",
        kept.display()
    );
}

/// The stage `BREAK_STAGE` names, if any.
fn break_stage() -> Option<u32> {
    let value = std::env::var("BREAK_STAGE").ok()?;
    let n = value
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("BREAK_STAGE={value}: expected a stage number 1..=13"));
    assert!(
        (1..=13).contains(&n),
        "BREAK_STAGE={value}: expected a stage number 1..=13"
    );
    Some(n)
}

/// True when stage `n` is to be broken on purpose.
fn broken(n: u32) -> bool {
    break_stage() == Some(n)
}

/// A line on the terminal even while the test harness captures output.
fn say(line: &str) {
    let mut stderr = std::io::stderr();
    // The terminal going away must not fail the test.
    let _ = writeln!(stderr, "{line}");
}

fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "(no message)".to_string())
}

/// Best effort after a failed or broken run, so a real cluster is left as it was found.
fn clean_up(estates: &Estates) {
    for engine in [&estates.app, &estates.network] {
        // Errors are expected here (state already gone, a stage left a foreign object): ignore.
        let _ = engine.run(&["destroy", "-auto-approve"]);
    }
    let _ = estates.cluster.kubectl(&[
        "delete",
        "namespaces,clusterroles,clusterrolebindings",
        "shop",
        "platform",
        "tofu-records-app",
        "tofu-records-network",
        "app-planner",
        "--ignore-not-found",
        "--wait=false",
    ]);
}

// ---- engine steps every stage uses ----

/// `plan` saved and read back with `show -json`; the plan must succeed.
fn plan(engine: &Engine, extra: &[&str]) -> Result<PlanSummary, String> {
    let (out, summary) = engine.plan_json(extra);
    ensure!(out.success(), "plan {} failed:\n{out}", extra.join(" "));
    summary.ok_or_else(|| format!("plan succeeded but wrote no plan file:\n{out}"))
}

/// `apply -auto-approve`; it must succeed and report `(added, changed, destroyed)`.
fn apply(engine: &Engine, extra: &[&str], counts: (u64, u64, u64)) -> Result<EngineOutput, String> {
    let mut args = vec!["apply", "-auto-approve"];
    args.extend_from_slice(extra);
    let out = engine.run(&args);
    ensure!(out.success(), "apply {} failed:\n{out}", extra.join(" "));
    expect_counts(&out, counts)?;
    Ok(out)
}

fn expect_counts(out: &EngineOutput, counts: (u64, u64, u64)) -> Check {
    let seen = applied_counts(out);
    ensure!(
        seen == Some(counts),
        "expected {counts:?} (added, changed, destroyed), the engine said {seen:?}:\n{out}"
    );
    Ok(())
}

/// The next plan is empty: `plan -detailed-exitcode` exits 0.
fn expect_no_changes(engine: &Engine) -> Check {
    let out = engine.run(&["plan", "-detailed-exitcode"]);
    ensure!(
        out.code == 0,
        "expected an empty plan (exit code 0), got exit code {}:\n{out}",
        out.code
    );
    Ok(())
}

/// The plan's changes other than no-op, exactly `expected` (address, actions) in any order.
fn expect_pending(plan: &PlanSummary, expected: &[(&str, &[&str])]) -> Check {
    let mut seen = pending(plan);
    seen.sort();
    let mut want: Vec<(String, Vec<String>)> = expected
        .iter()
        .map(|(a, actions)| (a.to_string(), actions.iter().map(|s| s.to_string()).collect()))
        .collect();
    want.sort();
    ensure!(
        seen == want,
        "the plan proposes {seen:?}, expected exactly {want:?}"
    );
    Ok(())
}

fn expect_label(object: &Value, estate: &str) -> Check {
    let label = estate_of(object);
    ensure!(
        label == Some(estate),
        "{} {} carries tofu-estate={label:?}, expected {estate:?}",
        object["kind"].as_str().unwrap_or_default(),
        object["metadata"]["name"].as_str().unwrap_or_default()
    );
    Ok(())
}

fn field<'a>(object: &'a Value, pointer: &str) -> &'a str {
    object
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn file(estates: &Estates, estate: &str, name: &str) -> std::path::PathBuf {
    estates.module_dir(estate).join(name)
}

// ---- the stages ----

/// Stage 1: network then app from empty; every object labelled; outputs recorded; GATEWAY_HOST wired.
fn greenfield(estates: &Estates) -> Check {
    let estate_pairs: [(&str, &Engine, &[Object]); 2] = [
        ("network", &estates.network, &NETWORK_OBJECTS),
        ("app", &estates.app, &APP_OBJECTS),
    ];
    for (estate, engine, objects) in estate_pairs {
        let plan = plan(engine, &[])?;
        let mut creates: Vec<(&str, &[&str])> = objects.iter().map(|o| (o.0, &["create"][..])).collect();
        creates.push((RECORDS, &["create"]));
        expect_pending(&plan, &creates)?;
        apply(engine, &[], (creates.len() as u64, 0, 0))?;
        for (_, resource, namespace, name) in objects {
            expect_label(&estates.existing(resource, *namespace, name)?, estate)?;
        }
        if estate == "network" {
            let outputs = engine.run(&["output", "-json"]);
            ensure!(outputs.success(), "output -json failed:\n{outputs}");
            let outputs: Value =
                serde_json::from_str(&outputs.stdout).map_err(|e| format!("output -json: {e}"))?;
            ensure!(
                outputs["gateway_host"]["value"] == GATEWAY_HOST,
                "network's gateway_host output: {outputs}"
            );
            ensure!(
                outputs["namespace"]["value"] == "platform",
                "network's namespace output: {outputs}"
            );
            let secrets = estates.records("network")?;
            ensure!(
                secrets.len() == 2,
                "expected network's 2 outputs as 2 Secrets, found {}",
                secrets.len()
            );
            let values: Vec<String> = secrets.iter().flat_map(secret_values).collect();
            for output in [GATEWAY_HOST, "platform"] {
                ensure!(
                    values.iter().any(|v| v.trim_matches('"') == output),
                    "no Secret in {} holds {output:?}; values: {values:?}",
                    records_namespace("network")
                );
            }
        }
    }
    let deployment = estates.existing("deployments.apps", Some("shop"), "web")?;
    let env = deployment
        .pointer("/spec/template/spec/containers/0/env")
        .cloned()
        .unwrap_or_default();
    let host = env
        .as_array()
        .into_iter()
        .flatten()
        .find(|e| e["name"] == "GATEWAY_HOST")
        .map(|e| &e["value"]);
    let expected = if broken(1) {
        "gateway.elsewhere.svc.cluster.local"
    } else {
        GATEWAY_HOST
    };
    ensure!(
        host == Some(&Value::from(expected)),
        "Deployment web's GATEWAY_HOST is {host:?}, expected {expected:?}"
    );
    let config = estates.existing("configmaps", Some("shop"), "app-config")?;
    ensure!(
        field(&config, "/data/gateway") == GATEWAY_URL,
        "app-config's gateway is {:?}",
        config["data"]["gateway"]
    );
    Ok(())
}

/// Stage 2: Both plans are empty and a no-op apply changes nothing, in the plan or in the cluster.
fn no_op(estates: &Estates) -> Check {
    let before = snapshot(&estates.labelled(None)?);
    for engine in [&estates.network, &estates.app] {
        let out = engine.run(&["plan", "-detailed-exitcode"]);
        let expected = if broken(2) { 2 } else { 0 };
        ensure!(
            out.code == expected,
            "plan -detailed-exitcode exited {}, expected {expected}:\n{out}",
            out.code
        );
        let plan = plan(engine, &[])?;
        ensure!(plan.is_empty(), "the saved plan proposes {:?}", pending(&plan));
        apply(engine, &[], (0, 0, 0))?;
    }
    let changes = snapshot_changes(&before, &snapshot(&estates.labelled(None)?));
    ensure!(
        changes.is_empty(),
        "the no-op applies changed the cluster: {changes:?}"
    );
    Ok(())
}

/// The identity of stage 3: reads the cluster, does anything with app's kinds and app's records,
/// and nothing at all in network's records namespace.
const PLANNER_RBAC: &str = r#"apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: app-planner
rules:
  - apiGroups: [""]
    resources: [namespaces, configmaps, services, serviceaccounts]
    verbs: ["*"]
  - apiGroups: [apps]
    resources: [deployments]
    verbs: ["*"]
  - apiGroups: [autoscaling]
    resources: [horizontalpodautoscalers]
    verbs: ["*"]
  - apiGroups: [networking.k8s.io]
    resources: [networkpolicies]
    verbs: [get, list, watch]
  - apiGroups: [authorization.k8s.io]
    resources: [selfsubjectaccessreviews, selfsubjectrulesreviews]
    verbs: [create]
  - nonResourceURLs: ["/api", "/api/*", "/apis", "/apis/*", "/version", "/openapi/*"]
    verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: app-planner
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: app-planner
subjects:
  - apiGroup: rbac.authorization.k8s.io
    kind: User
    name: app-planner
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: app-planner
  namespace: tofu-records-app
rules:
  - apiGroups: ["*"]
    resources: ["*"]
    verbs: ["*"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: app-planner
  namespace: tofu-records-app
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: app-planner
subjects:
  - apiGroup: rbac.authorization.k8s.io
    kind: User
    name: app-planner
"#;

/// The one grant of stage 3: `get` (no `list`) on network's output Secrets, by name.
fn outputs_grant(secret_names: &[String]) -> String {
    format!(
        r#"apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: app-reads-network-outputs
  namespace: tofu-records-network
rules:
  - apiGroups: [""]
    resources: [secrets]
    resourceNames: [{}]
    verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: app-reads-network-outputs
  namespace: tofu-records-network
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: app-reads-network-outputs
subjects:
  - apiGroup: rbac.authorization.k8s.io
    kind: User
    name: app-planner
"#,
        secret_names
            .iter()
            .map(|n| format!("{n:?}"))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// A snapshot of what network's records namespace holds (the grant aside).
fn records_contents(estates: &Estates) -> Result<std::collections::BTreeMap<String, ObjectVersion>, String> {
    let namespace = records_namespace("network");
    let out = estates.kubectl(&[
        "get",
        "secrets,configmaps,serviceaccounts",
        "-n",
        &namespace,
        "-o",
        "json",
    ])?;
    let list: Value = serde_json::from_str(&out.stdout).map_err(|e| format!("kubectl get: {e}"))?;
    Ok(snapshot(
        list["items"].as_array().map(Vec::as_slice).unwrap_or_default(),
    ))
}

/// Stage 3: app's plan as `app-planner` is fenced off network's outputs until a by-name `get` grant.
fn read_fence(estates: &Estates) -> Check {
    let rbac = estates.scratch().join("app-planner.yaml");
    write(&rbac, PLANNER_RBAC)?;
    estates.kubectl(&["apply", "--validate=false", "-f", &rbac.to_string_lossy()])?;
    let before = records_contents(estates)?;
    let planner = estates.engine_as("app", &estates.cluster.kubeconfig_for("app-planner"));

    let fenced = planner.run(&["plan", "-detailed-exitcode"]);
    ensure!(
        fenced.code == 1,
        "the planner's plan should fail with exit code 1:\n{fenced}"
    );
    let text = fenced.combined();
    for needle in ["may not read", "\"network\"", "tofu-records-network"] {
        ensure!(
            text.contains(needle),
            "the fenced plan's error does not say {needle:?}:\n{fenced}"
        );
    }

    let grant = estates.scratch().join("app-reads-network-outputs.yaml");
    if !broken(3) {
        let names: Vec<String> = estates
            .records("network")?
            .iter()
            .map(|s| field(s, "/metadata/name").to_string())
            .collect();
        write(&grant, &outputs_grant(&names))?;
        estates.kubectl(&["apply", "--validate=false", "-f", &grant.to_string_lossy()])?;
    }
    let granted = planner.run(&["plan", "-detailed-exitcode"]);
    ensure!(
        granted.code == 0,
        "with the grant, the planner's plan should be empty (exit code 0):\n{granted}"
    );
    ensure!(
        granted
            .combined()
            .contains("Outputs of estate \"network\" are as of its last apply"),
        "the plan does not say the values are as of network's last apply:\n{granted}"
    );
    let plan = plan(&planner, &[])?;
    ensure!(
        plan.is_empty(),
        "the planner's saved plan proposes {:?}",
        pending(&plan)
    );

    let changes = snapshot_changes(&before, &records_contents(estates)?);
    ensure!(
        changes.is_empty(),
        "the planner's plans changed tofu-records-network: {changes:?}"
    );
    // The identity and its grants go again: a records namespace holding foreign Roles outlives
    // its estate.
    for manifest in [&grant, &rbac] {
        estates.kubectl(&["delete", "--ignore-not-found", "-f", &manifest.to_string_lossy()])?;
    }
    Ok(())
}

/// Stage 4: A kubectl edit of app-config is one in-place update, which apply reverts.
fn drift(estates: &Estates) -> Check {
    let (target, patch) = if broken(4) {
        ("shard-0", r#"{"data":{"index":"9"}}"#)
    } else {
        (
            "app-config",
            r#"{"data":{"gateway":"http://drifted.example:80"}}"#,
        )
    };
    estates.kubectl(&[
        "patch",
        "configmap",
        target,
        "-n",
        "shop",
        "--type",
        "merge",
        "-p",
        patch,
    ])?;
    let plan = plan(&estates.app, &[])?;
    expect_pending(&plan, &[("kubernetes_config_map.app", &["update"])])?;
    apply(&estates.app, &[], (0, 1, 0))?;
    let config = estates.existing("configmaps", Some("shop"), "app-config")?;
    ensure!(
        field(&config, "/data/gateway") == GATEWAY_URL,
        "apply left app-config's gateway at {:?}",
        config["data"]
    );
    expect_no_changes(&estates.app)
}

/// Stage 5: A `moved` block renames the ServiceAccount's address without touching the object.
fn rename(estates: &Estates) -> Check {
    let before = estates.existing("serviceaccounts", Some("shop"), "app")?;
    let main = file(estates, "app", "main.tf");
    let text = read(&main)?;
    let text = replace_all(
        &text,
        "resource \"kubernetes_service_account\" \"app\"",
        "resource \"kubernetes_service_account\" \"team\"",
    )?;
    let text = replace_all(
        &text,
        "kubernetes_service_account.app.",
        "kubernetes_service_account.team.",
    )?;
    write(&main, &text)?;
    if !broken(5) {
        let moved =
            "moved {\n  from = kubernetes_service_account.app\n  to   = kubernetes_service_account.team\n}\n";
        write(&file(estates, "app", "moved.tf"), moved)?;
    }
    let plan = plan(&estates.app, &[])?;
    ensure!(
        plan.is_empty(),
        "the rename plans {:?}, expected nothing",
        pending(&plan)
    );
    let change = resource_change(&plan, "kubernetes_service_account.team")
        .ok_or("the plan does not mention kubernetes_service_account.team")?;
    ensure!(
        change["previous_address"] == "kubernetes_service_account.app",
        "kubernetes_service_account.team's previous address is {}",
        change["previous_address"]
    );
    apply(&estates.app, &[], (0, 0, 0))?;
    let after = estates.existing("serviceaccounts", Some("shop"), "app")?;
    ensure!(
        after["metadata"]["uid"] == before["metadata"]["uid"]
            && after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"],
        "ServiceAccount app was touched by the rename: {} -> {}",
        before["metadata"],
        after["metadata"]
    );
    expect_label(&after, "app")
}

const HPA_BLOCK: &str = "resource \"kubernetes_horizontal_pod_autoscaler_v2\" \"web\" {";

/// Stage 6: Deleting a resource block destroys exactly that object; putting it back recreates it.
fn remove_a_block(estates: &Estates) -> Check {
    let main = file(estates, "app", "main.tf");
    let original = read(&main)?;
    let mut edited = remove_block(&original, HPA_BLOCK)?;
    if broken(6) {
        edited = remove_block(&edited, "resource \"kubernetes_manifest\" \"handoff\" {")?;
    }
    write(&main, &edited)?;
    let plan = plan(&estates.app, &[])?;
    expect_pending(
        &plan,
        &[("kubernetes_horizontal_pod_autoscaler_v2.web", &["delete"])],
    )?;
    apply(&estates.app, &[], (0, 0, 1))?;
    ensure!(
        estates
            .object("horizontalpodautoscalers.autoscaling", Some("shop"), "web")?
            .is_none(),
        "the HPA web still exists after its block was removed and applied"
    );
    expect_no_changes(&estates.app)?;
    write(&main, &original)?;
    apply(&estates.app, &[], (1, 0, 0))?;
    expect_label(
        &estates.existing("horizontalpodautoscalers.autoscaling", Some("shop"), "web")?,
        "app",
    )
}

/// Stage 7: shard_count 2 -> 1 destroys exactly shard-1; back to 2 creates it again.
fn change_count(estates: &Estates) -> Check {
    let shard_0 = estates.existing("configmaps", Some("shop"), "shard-0")?;
    let fewer = if broken(7) {
        "shard_count=0"
    } else {
        "shard_count=1"
    };
    let plan_fewer = plan(&estates.app, &["-var", fewer])?;
    expect_pending(&plan_fewer, &[("kubernetes_config_map.shard[1]", &["delete"])])?;
    apply(&estates.app, &["-var", fewer], (0, 0, 1))?;
    ensure!(
        estates.object("configmaps", Some("shop"), "shard-1")?.is_none(),
        "shard-1 still exists"
    );
    let shard_0_after = estates.existing("configmaps", Some("shop"), "shard-0")?;
    ensure!(
        shard_0_after["metadata"]["resourceVersion"] == shard_0["metadata"]["resourceVersion"],
        "shard-0 changed while shard-1 was removed"
    );
    let plan_back = plan(&estates.app, &[])?;
    expect_pending(&plan_back, &[("kubernetes_config_map.shard[1]", &["create"])])?;
    apply(&estates.app, &[], (1, 0, 0))?;
    expect_label(&estates.existing("configmaps", Some("shop"), "shard-1")?, "app")
}

/// Stage 8: A renamed create_before_destroy ConfigMap: cfg-b is created before cfg-a is deleted.
fn create_before_destroy(estates: &Estates) -> Check {
    let lifecycle = if broken(8) {
        ""
    } else {
        "\n  lifecycle {\n    create_before_destroy = true\n  }\n"
    };
    let cbd = file(estates, "app", "cbd.tf");
    write(
        &cbd,
        &format!(
            r#"variable "cfg_name" {{
  type    = string
  default = "cfg-a"
}}

resource "kubernetes_config_map" "cfg" {{
  metadata {{
    name      = var.cfg_name
    namespace = kubernetes_namespace.shop.metadata[0].name
  }}

  data = {{
    purpose = "replaced on rename"
  }}
{lifecycle}}}
"#
        ),
    )?;
    apply(&estates.app, &[], (1, 0, 0))?;
    estates.existing("configmaps", Some("shop"), "cfg-a")?;
    let plan = plan(&estates.app, &["-var", "cfg_name=cfg-b"])?;
    expect_pending(&plan, &[("kubernetes_config_map.cfg", &["create", "delete"])])?;
    let out = apply(
        &estates.app,
        &["-parallelism=1", "-var", "cfg_name=cfg-b"],
        (1, 0, 1),
    )?;
    let created = out.stdout.find("kubernetes_config_map.cfg: Creation complete");
    let destroying = out.stdout.find("kubernetes_config_map.cfg (deposed object");
    ensure!(
        matches!((created, destroying), (Some(c), Some(d)) if c < d),
        "the apply log does not show cfg-b created before cfg-a's delete:\n{out}"
    );
    ensure!(
        estates.object("configmaps", Some("shop"), "cfg-a")?.is_none(),
        "cfg-a still exists"
    );
    expect_label(&estates.existing("configmaps", Some("shop"), "cfg-b")?, "app")?;
    remove(&cbd)?;
    apply(&estates.app, &[], (0, 0, 1))?;
    Ok(())
}

/// Two new ConfigMaps, the first holding the engine after its create (while `hold` exists): the
/// create is in the cluster, the state not yet saved, which is where stage 9 kills the engine.
fn crash_config(hold: &Path) -> String {
    format!(
        r#"resource "kubernetes_config_map" "crash_first" {{
  metadata {{
    name      = "crash-first"
    namespace = kubernetes_namespace.shop.metadata[0].name
  }}
  data = {{
    step = "first"
  }}

  provisioner "local-exec" {{
    command = "while [ -e '{}' ]; do sleep 0.1; done"
  }}
}}

resource "kubernetes_config_map" "crash_second" {{
  metadata {{
    name      = "crash-second"
    namespace = kubernetes_namespace.shop.metadata[0].name
  }}
  data = {{
    step = "second"
  }}

  depends_on = [kubernetes_config_map.crash_first]
}}
"#,
        hold.display()
    )
}

const FOREIGN_CONFIG: &str = r#"resource "kubernetes_config_map" "foreign" {
  metadata {
    name      = "crash-foreign"
    namespace = kubernetes_namespace.shop.metadata[0].name
  }
  data = {
    owner = "app"
  }
}
"#;

/// Stage 9: Killed between a create and the state save: the re-apply adopts the object; an object of
/// another estate is never adopted.
fn crash_mid_apply(estates: &Estates) -> Check {
    let hold = estates.scratch().join("hold");
    write(&hold, "")?;
    let crash = file(estates, "app", "crash.tf");
    write(&crash, &crash_config(&hold))?;
    let mut engine = estates.app.spawn(&["apply", "-auto-approve", "-parallelism=1"]);
    let seen = wait_until(Duration::from_secs(60), || {
        if let Some(status) = engine
            .try_wait()
            .map_err(|e| format!("waiting for the engine: {e}"))?
        {
            return Err(format!("the engine ended ({status}) before crash-first appeared"));
        }
        Ok(estates
            .object("configmaps", Some("shop"), "crash-first")?
            .is_some())
    });
    kill_tree(engine.id())?;
    let status = engine
        .wait()
        .map_err(|e| format!("waiting for the killed engine: {e}"))?;
    ensure!(
        seen?,
        "crash-first did not appear within a minute (engine {status})"
    );
    remove(&hold)?;

    let first = estates.existing("configmaps", Some("shop"), "crash-first")?;
    expect_label(&first, "app")?;
    ensure!(
        estates
            .object("configmaps", Some("shop"), "crash-second")?
            .is_none(),
        "crash-second was created"
    );
    let state = estates.app.run(&["state", "list"]);
    ensure!(state.success(), "state list after the kill failed:\n{state}");
    ensure!(
        !state.stdout.contains("crash_"),
        "the killed apply saved its creates in the state:\n{state}"
    );

    let plan = plan(&estates.app, &[])?;
    expect_pending(
        &plan,
        &[
            ("kubernetes_config_map.crash_first", &["create"]),
            ("kubernetes_config_map.crash_second", &["create"]),
        ],
    )?;
    let out = apply(&estates.app, &[], (2, 0, 0))?;
    // One warning names one of the two; the engine folds the other into "1 more similar warning".
    ensure!(
        out.combined()
            .contains("Adopting an existing object of this estate")
            && ["crash-first", "crash-second"].iter().any(|name| out
                .combined()
                .contains(&format!("ConfigMap \"shop/{name}\" already exists"))),
        "the re-apply does not say it adopted crash-first and crash-second:\n{out}"
    );
    let adopted = estates.existing("configmaps", Some("shop"), "crash-first")?;
    ensure!(
        adopted["metadata"]["uid"] == first["metadata"]["uid"],
        "crash-first was recreated instead of adopted"
    );
    expect_label(&adopted, "app")?;
    expect_label(
        &estates.existing("configmaps", Some("shop"), "crash-second")?,
        "app",
    )?;
    expect_no_changes(&estates.app)?;

    let owner = if broken(9) {
        "tofu-estate=app"
    } else {
        "tofu-estate=other"
    };
    estates.kubectl(&[
        "create",
        "configmap",
        "crash-foreign",
        "-n",
        "shop",
        "--from-literal=owner=other",
    ])?;
    estates.kubectl(&["label", "configmap", "crash-foreign", "-n", "shop", owner])?;
    let foreign = estates.existing("configmaps", Some("shop"), "crash-foreign")?;
    let foreign_tf = file(estates, "app", "foreign.tf");
    write(&foreign_tf, FOREIGN_CONFIG)?;
    let refused = estates.app.run(&["apply", "-auto-approve"]);
    ensure!(
        !refused.success(),
        "apply adopted an object labelled by another estate:\n{refused}"
    );
    ensure!(
        refused.combined().contains("\"other\""),
        "the refusal does not name estate \"other\":\n{refused}"
    );
    let untouched = estates.existing("configmaps", Some("shop"), "crash-foreign")?;
    ensure!(
        untouched["metadata"]["resourceVersion"] == foreign["metadata"]["resourceVersion"],
        "the foreign object was modified: {} -> {}",
        foreign["metadata"],
        untouched["metadata"]
    );

    remove(&foreign_tf)?;
    remove(&crash)?;
    apply(&estates.app, &[], (0, 0, 2))?;
    estates.kubectl(&["delete", "configmap", "crash-foreign", "-n", "shop"])?;
    Ok(())
}

/// Stage 10: A saved plan whose object changed since it was made is refused, then applies once the
/// change is reverted.
fn plan_review_apply(estates: &Estates) -> Check {
    write(
        &file(estates, "app", "review.auto.tfvars"),
        "log_level = \"debug\"\n",
    )?;
    let planned = estates
        .app
        .run(&["plan", "-detailed-exitcode", "-out=review.tfplan"]);
    ensure!(
        planned.code == 2,
        "plan -out should propose changes (exit code 2):\n{planned}"
    );
    let show = estates.app.run(&["show", "-json", "review.tfplan"]);
    ensure!(show.success(), "show -json review.tfplan failed:\n{show}");
    let saved =
        PlanSummary::from_json(serde_json::from_str(&show.stdout).map_err(|e| format!("show -json: {e}"))?);
    expect_pending(&saved, &[("kubernetes_config_map.app", &["update"])])?;

    let hand_edit = r#"{"data":{"gateway":"http://hand-edited.example:80"}}"#;
    if !broken(10) {
        estates.kubectl(&[
            "patch",
            "configmap",
            "app-config",
            "-n",
            "shop",
            "--type",
            "merge",
            "-p",
            hand_edit,
        ])?;
    }
    let edited = estates.existing("configmaps", Some("shop"), "app-config")?;
    let refused = estates.app.run(&["apply", "review.tfplan"]);
    ensure!(!refused.success(), "the stale saved plan was applied:\n{refused}");
    ensure!(
        refused.combined().contains("no longer matches"),
        "the refusal does not say the approved plan no longer matches the live system:\n{refused}"
    );
    let after = estates.existing("configmaps", Some("shop"), "app-config")?;
    ensure!(
        after["metadata"]["resourceVersion"] == edited["metadata"]["resourceVersion"],
        "the refused apply changed app-config: {} -> {}",
        edited["data"],
        after["data"]
    );

    let revert = format!(r#"{{"data":{{"gateway":"{GATEWAY_URL}"}}}}"#);
    estates.kubectl(&[
        "patch",
        "configmap",
        "app-config",
        "-n",
        "shop",
        "--type",
        "merge",
        "-p",
        &revert,
    ])?;
    let out = estates.app.run(&["apply", "review.tfplan"]);
    ensure!(
        out.success(),
        "after the revert, the saved plan should apply:\n{out}"
    );
    expect_counts(&out, (0, 1, 0))?;
    let config = estates.existing("configmaps", Some("shop"), "app-config")?;
    ensure!(
        field(&config, "/data/log_level") == "debug",
        "app-config after the saved plan: {}",
        config["data"]
    );
    expect_no_changes(&estates.app)
}

/// How many resource instances the estate's state holds (data sources aside).
fn managed_count(engine: &Engine) -> Result<usize, String> {
    let listed = engine.run(&["state", "list"]);
    ensure!(listed.success(), "state list failed:\n{listed}");
    Ok(listed
        .stdout
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with("data."))
        .count())
}

/// Every object app owns, its records included, by identity.
fn app_objects(estates: &Estates) -> Result<std::collections::BTreeMap<String, ObjectVersion>, String> {
    let mut objects = estates.labelled(Some("app"))?;
    objects.extend(estates.records("app")?);
    Ok(snapshot(&objects))
}

/// Stage 11: With app's state deleted, apply finds and adopts every object; nothing created or destroyed.
fn lost_state(estates: &Estates) -> Check {
    let before = app_objects(estates)?;
    let managed = managed_count(&estates.app)?;
    for name in ["terraform.tfstate", "terraform.tfstate.backup"] {
        remove(&file(estates, "app", name))?;
    }
    if broken(11) {
        estates.kubectl(&["delete", "configmap", "shard-0", "-n", "shop"])?;
    }
    let plan = plan(&estates.app, &[])?;
    let changes = pending(&plan);
    ensure!(
        changes.len() == managed && changes.iter().all(|(_, a)| a == &["create"]),
        "expected {managed} creates (one per object, each found again), the plan proposes {changes:?}"
    );
    apply(&estates.app, &[], (managed as u64, 0, 0))?;
    let after = app_objects(estates)?;
    let recreated: Vec<String> = snapshot_changes(&before, &after)
        .into_iter()
        .filter(|c| !c.contains(": modified"))
        .collect();
    ensure!(
        recreated.is_empty(),
        "objects were created twice or destroyed: {recreated:?}"
    );
    expect_no_changes(&estates.app)
}

fn legacy_objects(mode: &str) -> String {
    format!(
        r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: legacy-settings
  namespace: shop
data:
  mode: {mode}
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: legacy-bot
  namespace: shop
automountServiceAccountToken: true
"#
    )
}

const MIGRATE_CONFIG: &str = r#"import {
  to = kubernetes_config_map.legacy
  id = "shop/legacy-settings"
}

resource "kubernetes_config_map" "legacy" {
  metadata {
    name      = "legacy-settings"
    namespace = kubernetes_namespace.shop.metadata[0].name
  }
  data = {
    mode = "legacy"
  }
}

import {
  to = kubernetes_service_account.legacy
  id = "shop/legacy-bot"
}

resource "kubernetes_service_account" "legacy" {
  metadata {
    name      = "legacy-bot"
    namespace = kubernetes_namespace.shop.metadata[0].name
  }
  automount_service_account_token = true
}
"#;

const MIGRATED: [(&str, &str, &str); 2] = [
    ("kubernetes_config_map.legacy", "configmaps", "legacy-settings"),
    (
        "kubernetes_service_account.legacy",
        "serviceaccounts",
        "legacy-bot",
    ),
];

/// Stage 12: Unlabelled objects made by another tool are imported; the plan only stamps the label.
fn migrate(estates: &Estates) -> Check {
    let legacy = estates.scratch().join("legacy.yaml");
    write(
        &legacy,
        &legacy_objects(if broken(12) { "other" } else { "legacy" }),
    )?;
    estates.kubectl(&["create", "--validate=false", "-f", &legacy.to_string_lossy()])?;
    for (_, resource, name) in MIGRATED {
        let object = estates.existing(resource, Some("shop"), name)?;
        ensure!(
            estate_of(&object).is_none(),
            "{name} already carries an estate label"
        );
    }
    write(&file(estates, "app", "migrate.tf"), MIGRATE_CONFIG)?;
    let plan = plan(&estates.app, &[])?;
    expect_pending(&plan, &MIGRATED.map(|(address, _, _)| (address, &["update"][..])))?;
    for (address, _, _) in MIGRATED {
        let change =
            &resource_change(&plan, address).ok_or(format!("the plan does not mention {address}"))?["change"];
        ensure!(
            change["importing"].is_object(),
            "{address} is not imported by the plan"
        );
        let differences = known_differences(change);
        ensure!(
            differences == ["estate"],
            "{address}'s update changes {differences:?}, expected only the estate"
        );
    }
    apply(&estates.app, &[], (0, 2, 0))?;
    for (_, resource, name) in MIGRATED {
        expect_label(&estates.existing(resource, Some("shop"), name)?, "app")?;
    }
    expect_no_changes(&estates.app)
}

/// Stage 13: app destroyed first with network untouched, then network; nothing labelled remains and
/// network's outputs are no longer recorded.
fn teardown(estates: &Estates) -> Check {
    let network_objects = || -> Result<_, String> {
        let mut objects = estates.labelled(Some("network"))?;
        objects.extend(estates.records("network")?);
        Ok(snapshot(&objects))
    };
    let network_before = network_objects()?;
    if broken(13) {
        let out = estates.network.run(&["destroy", "-auto-approve"]);
        ensure!(out.success(), "destroy of network failed:\n{out}");
    }

    let managed = managed_count(&estates.app)?;
    let plan = plan(&estates.app, &["-destroy"])?;
    let changes = pending(&plan);
    ensure!(
        changes.len() == managed && changes.iter().all(|(_, a)| a == &["delete"]),
        "expected {managed} deletes, the destroy plan proposes {changes:?}"
    );
    let out = estates.app.run(&["destroy", "-auto-approve"]);
    ensure!(out.success(), "destroy of app failed:\n{out}");
    expect_counts(&out, (0, 0, managed as u64))?;
    estates.wait_gone("namespaces", None, "shop")?;
    let changes = snapshot_changes(&network_before, &network_objects()?);
    ensure!(changes.is_empty(), "destroying app touched network: {changes:?}");
    estates.wait_unlabelled(Some("app"))?;
    let records = estates.records("app")?;
    ensure!(
        records.is_empty(),
        "app's records survived its destroy: {:?}",
        snapshot(&records).keys()
    );

    let out = estates.network.run(&["destroy", "-auto-approve"]);
    ensure!(out.success(), "destroy of network failed:\n{out}");
    estates.wait_gone("namespaces", None, "platform")?;
    estates.wait_unlabelled(None)?;
    let records = estates.records("network")?;
    ensure!(
        records.is_empty(),
        "network's output Secrets survived: {:?}",
        snapshot(&records).keys()
    );

    let read = estates.app.run(&["plan"]);
    ensure!(
        !read.success(),
        "app's plan read network's outputs after network's destroy:\n{read}"
    );
    ensure!(
        read.combined()
            .contains("Outputs of estate \"network\" are not recorded"),
        "the read is not told network's outputs are not recorded:\n{read}"
    );
    Ok(())
}
