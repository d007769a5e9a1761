//! Stages 1 to 3: the greenfield apply of both estates, a no-op, and the cross-estate read
//! fence (what a planner granted some of network's outputs may read).

use super::steps::{
    APP_OBJECTS, GATEWAY_HOST, GATEWAY_URL, NETWORK_OBJECTS, Object, RECORDS, apply, broken, expect_label,
    expect_pending, field, plan,
};
use acceptance::Engine;
use acceptance::ensure;
use acceptance::records_fixtures::records_namespace;
use acceptance::scenario::{
    Check, Estates, ObjectVersion, pending, secret_values, snapshot, snapshot_changes, write,
};
use serde_json::Value;

/// Stage 1: network then app from empty; every object labelled; outputs recorded; GATEWAY_HOST wired.
pub(super) fn greenfield(estates: &Estates) -> Check {
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
pub(super) fn no_op(estates: &Estates) -> Check {
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
pub(super) const PLANNER_RBAC: &str = r#"apiVersion: rbac.authorization.k8s.io/v1
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
pub(super) fn outputs_grant(secret_names: &[String]) -> String {
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
pub(super) fn records_contents(
    estates: &Estates,
) -> Result<std::collections::BTreeMap<String, ObjectVersion>, String> {
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
pub(super) fn read_fence(estates: &Estates) -> Check {
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
