//! provider-live's promises beyond hashicorp/kubernetes, with the real engine: the estate label
//! decides who may write an object (adopt ours, refuse another estate's, refuse unlabelled ones
//! but point at import), a saved plan is refused once the live object moved, fields other
//! managers own (an autoscaler's replicas, kubectl's annotations) never become diffs, user
//! labels and annotations are kept exactly, the estate label is on every object but never in a
//! plan, a bad estate fails validate, and a Secret's data never reaches output or logs.

use acceptance::Cluster;
use acceptance::hcl::{LiveDir, ScratchNamespace, metadata, quote, string_map, unique_name};
use acceptance::objects::base64_of;
use serde_json::Value;

/// A `kubernetes_config_map` resource `address_name` for object `name` in `ns` with `data`.
fn config_map(address_name: &str, name: &str, ns: &str, data: &[(&str, &str)]) -> String {
    let (address, metadata, data) = (quote(address_name), metadata(name, ns), string_map(data));
    format!("resource \"kubernetes_config_map\" {address} {{\n{metadata}  data = {data}\n}}\n")
}

/// A ConfigMap made with kubectl, labelled `tofu-estate=<estate>` when `estate` is given.
fn precreate(cluster: &Cluster, ns: &str, name: &str, estate: Option<&str>) -> Value {
    cluster.kubectl_ok(&["create", "configmap", name, "-n", ns, "--from-literal=k=before"]);
    if let Some(estate) = estate {
        let label = format!("tofu-estate={estate}");
        cluster.kubectl_ok(&["label", "configmap", name, "-n", ns, &label]);
    }
    cluster.get_json(&["configmap", name, "-n", ns])
}

#[test]
fn estate_label_decides_adopt_refuse_or_import() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "owner");
    let estate = unique_name("est");
    let work = LiveDir::new(&estate, cluster.kubeconfig());
    let ns = ns.name.as_str();

    // Labelled with this estate (a lost state): adopted, with a warning saying so.
    precreate(&cluster, ns, "ours", Some(&estate));
    work.write(&config_map("ours", "ours", ns, &[("k", "after")]));
    let out = work.apply_ok("adopt");
    assert!(
        out.combined().contains(&format!(
            "ConfigMap \"{ns}/ours\" already exists and carries this estate's label"
        )),
        "no adoption warning:\n{out}"
    );
    let ours = cluster.get_json(&["configmap", "ours", "-n", ns]);
    assert_eq!(ours["data"]["k"], "after", "the adopted object was not written");

    // Another estate's object and an unlabelled one: refused, both left exactly as they were.
    let theirs = precreate(&cluster, ns, "theirs", Some("other"));
    let bare = precreate(&cluster, ns, "bare", None);
    work.write(&format!(
        "{}{}{}",
        config_map("ours", "ours", ns, &[("k", "after")]),
        config_map("theirs", "theirs", ns, &[("k", "after")]),
        config_map("bare", "bare", ns, &[("k", "after")]),
    ));
    let out = work.apply();
    assert!(!out.success(), "apply over foreign objects succeeded:\n{out}");
    // Diagnostics are word-wrapped: compare with runs of whitespace as one space.
    let text = out.combined().split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        text.contains(&format!("ConfigMap \"{ns}/theirs\" belongs to estate \"other\"")),
        "the error does not name estate \"other\":\n{out}"
    );
    assert!(
        text.contains(&format!(
            "ConfigMap \"{ns}/bare\" already exists and belongs to no estate"
        )) && text.contains(&format!(
            "terraform import kubernetes_config_map.<name> \"{ns}/bare\""
        )),
        "the error does not say to import the unlabelled object:\n{out}"
    );
    for before in [theirs, bare] {
        let name = before["metadata"]["name"].as_str().expect("a name");
        let now = cluster.get_json(&["configmap", name, "-n", ns]);
        assert_eq!(
            now["metadata"]["resourceVersion"], before["metadata"]["resourceVersion"],
            "{name} was written"
        );
        assert_eq!(now["data"], before["data"], "{name} changed");
        assert_eq!(
            now["metadata"]["labels"], before["metadata"]["labels"],
            "{name} relabelled"
        );
    }
}

#[test]
fn stale_plan_is_refused_then_accepted_once_reverted() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "stale");
    let work = LiveDir::new(&unique_name("est"), cluster.kubeconfig());
    let ns = ns.name.as_str();
    work.write(&config_map("cfg", "cfg", ns, &[("k", "v1")]));
    work.apply_ok("create");

    work.write(&config_map("cfg", "cfg", ns, &[("k", "v2")]));
    let plan = work.run(&["plan", "-input=false", "-out=approved.tfplan"]);
    assert!(plan.success(), "plan failed:\n{plan}");

    // Someone edits the object between plan and apply.
    let patch = |value: &str| {
        let body = format!("{{\"data\":{{\"k\":{value:?}}}}}");
        cluster.kubectl_ok(&["patch", "configmap", "cfg", "-n", ns, "--type=merge", "-p", &body]);
        cluster.get_json(&["configmap", "cfg", "-n", ns])
    };
    let moved = patch("by-hand");
    let out = work.run(&["apply", "-input=false", "approved.tfplan"]);
    assert!(!out.success(), "a stale plan was applied:\n{out}");
    assert!(
        out.combined()
            .contains("The approved plan no longer matches the live system"),
        "not refused as stale:\n{out}"
    );
    let after = cluster.get_json(&["configmap", "cfg", "-n", ns]);
    assert_eq!(
        after["metadata"]["resourceVersion"], moved["metadata"]["resourceVersion"],
        "the refused apply wrote the object"
    );
    assert_eq!(after["data"]["k"], "by-hand");

    // Restored to what the plan saw: the same plan applies.
    patch("v1");
    let out = work.run(&["apply", "-input=false", "approved.tfplan"]);
    assert!(
        out.success(),
        "the plan was refused although the object was restored:\n{out}"
    );
    let done = cluster.get_json(&["configmap", "cfg", "-n", ns]);
    assert_eq!(done["data"]["k"], "v2");
}

/// A Deployment `web` without `replicas` (an autoscaler owns them), with user labels and
/// annotations, whose container sets env `REV`.
fn web_deployment(ns: &str, rev: &str) -> String {
    format!(
        "resource \"kubernetes_deployment\" \"web\" {{\n  metadata {{\n    name        = \"web\"\n    \
         namespace   = {}\n    labels      = {{ app = \"web\", team = \"shop\" }}\n    \
         annotations = {{ \"example.com/owner\" = \"shop-team\", note = \"kept\" }}\n  }}\n  spec {{\n    \
         selector {{\n      match_labels = {{ app = \"web\" }}\n    }}\n    template {{\n      metadata {{\n        \
         labels = {{ app = \"web\" }}\n      }}\n      spec {{\n        container {{\n          name  = \"web\"\n          \
         image = \"registry.k8s.io/pause:3.10\"\n          env {{\n            name  = \"REV\"\n            \
         value = {}\n          }}\n        }}\n      }}\n    }}\n  }}\n}}\n",
        quote(ns),
        quote(rev)
    )
}

#[test]
fn fields_of_other_managers_never_become_diffs() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "hpa");
    let estate = unique_name("est");
    let work = LiveDir::new(&estate, cluster.kubeconfig());
    let ns = ns.name.as_str();
    work.write(&web_deployment(ns, "1"));
    work.apply_ok("create");

    // User labels and annotations are exactly what was configured, plus the estate label.
    let live = cluster.get_json(&["deployment", "web", "-n", ns]);
    assert_eq!(
        live["metadata"]["labels"],
        serde_json::json!({"app": "web", "team": "shop", "tofu-estate": estate})
    );
    assert_eq!(live["metadata"]["annotations"]["example.com/owner"], "shop-team");
    assert_eq!(live["metadata"]["annotations"]["note"], "kept");
    let state = work.state_values("kubernetes_deployment.web");
    assert_eq!(
        state["metadata"][0]["labels"],
        serde_json::json!({"app": "web", "team": "shop"})
    );
    assert_eq!(
        state["metadata"][0]["annotations"],
        serde_json::json!({"example.com/owner": "shop-team", "note": "kept"})
    );

    // An autoscaler (here kubectl, another field manager) sets replicas; kubectl's restart
    // annotation lands on the object.
    cluster.kubectl_ok(&["scale", "deployment", "web", "-n", ns, "--replicas=3"]);
    cluster.kubectl_ok(&[
        "annotate",
        "deployment",
        "web",
        "-n",
        ns,
        "kubectl.kubernetes.io/restartedAt=2026-01-01T00:00:00Z",
    ]);
    let plan = work.plan_exit();
    assert_eq!(
        plan.code, 0,
        "replicas or a server-set annotation became a diff:\n{plan}"
    );

    // A change of ours leaves both alone.
    work.write(&web_deployment(ns, "2"));
    let out = work.apply_ok("update");
    assert!(out.stdout.contains("0 added, 1 changed, 0 destroyed"), "{out}");
    let live = cluster.get_json(&["deployment", "web", "-n", ns]);
    assert_eq!(
        live["spec"]["replicas"], 3,
        "the update reset the autoscaler's replicas"
    );
    assert_eq!(
        live["metadata"]["annotations"]["kubectl.kubernetes.io/restartedAt"], "2026-01-01T00:00:00Z",
        "the update removed kubectl's annotation"
    );
    assert_eq!(
        live["spec"]["template"]["spec"]["containers"][0]["env"][0]["value"],
        "2"
    );
}

#[test]
fn estate_label_on_every_object_but_never_in_output_and_secrets_never_shown() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "label");
    let estate = unique_name("est");
    let work = LiveDir::new(&estate, cluster.kubeconfig());
    let ns = ns.name.as_str();
    let secret = format!("pw-{}", unique_name("hunter2"));
    let config = |rev: &str| {
        format!(
            "{}resource \"kubernetes_secret\" \"db\" {{\n  metadata {{\n    name      = \"db\"\n    \
             namespace = {ns:?}\n    labels    = {{ rev = {rev:?} }}\n  }}\n  data = {{ password = \"{secret}-{rev}\" }}\n}}\n\
             resource \"kubernetes_service_account\" \"app\" {{\n  metadata {{\n    name      = \"app\"\n    \
             namespace = {ns:?}\n    labels    = {{ rev = {rev:?} }}\n  }}\n}}\n\
             resource \"kubernetes_service\" \"web\" {{\n  metadata {{\n    name      = \"web\"\n    \
             namespace = {ns:?}\n    labels    = {{ rev = {rev:?} }}\n  }}\n  spec {{\n    selector = {{ app = \"web\" }}\n    \
             port {{\n      port = 80\n    }}\n  }}\n}}\n",
            config_map("cfg", "cfg", ns, &[("rev", rev)])
        )
    };
    let traced = work.engine().clone().env("TF_LOG", "trace");
    let apply = |rev: &str| {
        work.write(&config(rev));
        let out = traced.run(&["apply", "-auto-approve", "-input=false", "-parallelism=4"]);
        assert!(out.success(), "apply {rev} failed:\n{out}");
        out
    };
    let create = apply("1");
    let listed = cluster.kubectl_ok(&[
        "get",
        "configmap/cfg",
        "secret/db",
        "serviceaccount/app",
        "service/web",
        "-n",
        ns,
        "-L",
        "tofu-estate",
        "--no-headers",
    ]);
    let rows: Vec<&str> = listed.stdout.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(rows.len(), 4, "{listed}");
    for row in rows {
        assert_eq!(
            row.split_whitespace().last(),
            Some(estate.as_str()),
            "no estate label: {row}"
        );
    }
    let update = apply("2");
    let plan = traced.run(&["plan", "-input=false", "-detailed-exitcode"]);
    assert_eq!(plan.code, 0, "{plan}");

    for (what, out) in [("create", &create), ("update", &update), ("plan", &plan)] {
        assert!(
            !out.stdout.contains("tofu-estate"),
            "the estate label shows in the {what} output:\n{}",
            out.stdout
        );
        for rev in ["1", "2"] {
            let value = format!("{secret}-{rev}");
            let encoded = base64_of(&value);
            for (stream, text) in [("stdout", &out.stdout), ("log", &out.stderr)] {
                assert!(!text.contains(&value), "secret data in the {what} {stream}");
                assert!(
                    !text.contains(&encoded),
                    "base64 secret data in the {what} {stream}"
                );
            }
        }
    }
    assert!(
        update.stderr.contains("[TRACE]"),
        "TF_LOG=trace gave no log, so the check above proves nothing"
    );
}

/// Standard base64 of `text`, as the API stores Secret data.
#[test]
fn bad_estate_fails_validate_and_v1_names_validate() {
    let cluster = Cluster::start();
    let bad = LiveDir::new("Not_An_Estate!", cluster.kubeconfig());
    bad.write(&config_map("cfg", "cfg", "default", &[("k", "v")]));
    let out = bad.run(&["validate"]);
    assert!(!out.success(), "validate accepted a bad estate:\n{out}");
    assert!(
        out.combined().contains("estate"),
        "the error does not name `estate`:\n{out}"
    );

    // The `_v1` names of every kind are served too.
    let good = LiveDir::new("good", cluster.kubeconfig());
    let meta = "  metadata {\n    name = \"x\"\n  }\n";
    let bodies = [
        ("kubernetes_namespace_v1", String::new()),
        ("kubernetes_config_map_v1", String::new()),
        ("kubernetes_secret_v1", String::new()),
        ("kubernetes_service_v1", "  spec {\n    port {\n      port = 80\n    }\n  }\n".into()),
        ("kubernetes_service_account_v1", String::new()),
        (
            "kubernetes_deployment_v1",
            "  spec {\n    selector {\n      match_labels = { a = \"b\" }\n    }\n    template {\n      metadata {\n        \
             labels = { a = \"b\" }\n      }\n      spec {\n        container {\n          name  = \"c\"\n          \
             image = \"i\"\n        }\n      }\n    }\n  }\n"
                .into(),
        ),
        (
            "kubernetes_horizontal_pod_autoscaler_v2",
            "  spec {\n    max_replicas = 2\n    scale_target_ref {\n      kind = \"Deployment\"\n      name = \"x\"\n    }\n  }\n"
                .into(),
        ),
        (
            "kubernetes_network_policy_v1",
            "  spec {\n    pod_selector {}\n    policy_types = [\"Ingress\"]\n  }\n".into(),
        ),
    ];
    let config: String = bodies
        .iter()
        .map(|(type_name, body)| format!("resource \"{type_name}\" \"x\" {{\n{meta}{body}}}\n"))
        .collect();
    good.write(&config);
    let out = good.run(&["validate"]);
    assert!(out.success(), "validate of the _v1 names failed:\n{out}");
}

/// A `kubernetes_manifest` ConfigMap `typed` in `ns` whose annotations are `var.m`, a
/// `map(string)` that is null unless set.
fn typed_manifest(ns: &str) -> String {
    format!(
        "variable \"m\" {{\n  type    = map(string)\n  default = null\n}}\n\n\
         resource \"kubernetes_manifest\" \"typed\" {{\n  manifest = {{\n    apiVersion = \"v1\"\n    \
         kind       = \"ConfigMap\"\n    metadata = {{\n      name        = \"typed\"\n      \
         namespace   = {}\n      annotations = var.m\n    }}\n    data = {{ k = \"v\" }}\n  }}\n}}\n",
        quote(ns)
    )
}

#[test]
fn manifest_values_keep_their_types_a_null_map_plans_applies_and_settles() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "typed");
    let estate = unique_name("est");
    let work = LiveDir::new(&estate, cluster.kubeconfig());
    let ns = ns.name.as_str();
    work.write(&typed_manifest(ns));

    // A null map(string) inside the manifest goes back to the engine as one.
    work.apply_ok("create with null annotations");
    let live = cluster.get_json(&["configmap", "typed", "-n", ns]);
    assert_eq!(live["data"]["k"], "v");
    assert_eq!(live["metadata"]["labels"]["tofu-estate"], estate.as_str());
    let state = work.state_values("kubernetes_manifest.typed");
    assert_eq!(
        state["manifest"]["metadata"]["annotations"],
        Value::Null,
        "{state}"
    );
    let plan = work.plan_exit();
    assert_eq!(plan.code, 0, "the plan after apply is not empty:\n{plan}");

    // The same map, set: applied, and settled again.
    let set = ["-var", "m={note = \"kept\"}"];
    let out = work.run(&[&["apply", "-auto-approve", "-input=false"][..], &set].concat());
    assert!(out.success(), "apply with annotations:\n{out}");
    let live = cluster.get_json(&["configmap", "typed", "-n", ns]);
    assert_eq!(live["metadata"]["annotations"]["note"], "kept");
    let plan = work.run(&[&["plan", "-input=false", "-detailed-exitcode"][..], &set].concat());
    assert_eq!(plan.code, 0, "the plan after apply is not empty:\n{plan}");

    let out = work.run(&["destroy", "-auto-approve", "-input=false"]);
    assert!(out.success(), "destroy:\n{out}");
}

/// A ConfigMap named by the server (`generate_name`) with `data`.
fn generated_config_map(ns: &str, data: &[(&str, &str)]) -> String {
    format!(
        "resource \"kubernetes_config_map_v1\" \"gen\" {{\n  metadata {{\n    generate_name = \"gen-\"\n    \
         namespace     = {}\n  }}\n  data = {}\n}}\n",
        quote(ns),
        string_map(data)
    )
}

/// A `generate_name` object is made by a POST (the server picks the name), whose fields the API
/// server records under an `Update` entry that a later server-side apply cannot drop. The
/// provider hands them to its apply, so a key the configuration drops leaves the object, and
/// the next plan is empty.
#[test]
fn generate_name_object_drops_what_the_configuration_drops() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "gen");
    let work = LiveDir::new(&unique_name("est"), cluster.kubeconfig());
    let ns = ns.name.as_str();
    work.write(&generated_config_map(ns, &[("a", "1"), ("b", "2")]));
    work.apply_ok("create");
    let name = work.state_values("kubernetes_config_map_v1.gen")["metadata"][0]["name"]
        .as_str()
        .expect("the generated name is in state")
        .to_string();
    assert!(name.starts_with("gen-"), "name {name}");
    let live = cluster.get_json(&["configmap", &name, "-n", ns, "--show-managed-fields"]);
    let entries = live["metadata"]["managedFields"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        entries
            .iter()
            .any(|e| e["manager"] == "tofu-live" && e["operation"] == "Apply"),
        "the create's fields were not handed to the apply: {entries:?}"
    );

    work.write(&generated_config_map(ns, &[("a", "1")]));
    work.apply_ok("drop b");
    let live = cluster.get_json(&["configmap", &name, "-n", ns]);
    assert_eq!(live["data"], serde_json::json!({"a": "1"}), "key b was left");
    let plan = work.plan_exit();
    assert_eq!(plan.code, 0, "plan not empty after dropping a key:\n{plan}");
}

/// A Deployment whose container limits are `cpu`, without waiting for its rollout.
fn limited_deployment(ns: &str, cpu: &str) -> String {
    format!(
        r#"resource "kubernetes_deployment_v1" "limited" {{
{metadata}  wait_for_rollout = false
  spec {{
    selector {{
      match_labels = {{ app = "limited" }}
    }}
    template {{
      metadata {{
        labels = {{ app = "limited" }}
      }}
      spec {{
        container {{
          name  = "web"
          image = "nginx:1.27"
          resources {{
            limits = {{ cpu = {cpu}, memory = "512Mi" }}
          }}
        }}
      }}
    }}
  }}
}}
"#,
        metadata = metadata("limited", ns),
        cpu = quote(cpu),
    )
}

/// A quantity is planned as configured; the state then holds the server's spelling (`0.5` as
/// `500m`), as hashicorp's legacy-SDK state does, and an equal quantity is no change.
#[test]
fn quantities_are_planned_as_written_and_held_as_the_server_spells_them() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "qty");
    let work = LiveDir::new(&unique_name("est"), cluster.kubeconfig());
    let ns = ns.name.as_str();
    work.write(&limited_deployment(ns, "0.5"));
    work.apply_ok("create with cpu 0.5");
    let limits = |work: &LiveDir| {
        work.state_values("kubernetes_deployment_v1.limited")["spec"][0]["template"][0]["spec"][0]["container"][0]
            ["resources"][0]["limits"]
            .clone()
    };
    // hashicorp's (legacy SDK) state holds what the server reads back, and its plan treats an
    // equal quantity as no change.
    assert_eq!(limits(&work)["cpu"], "500m", "state holds the server's form");
    let live = cluster.get_json(&["deployment", "limited", "-n", ns]);
    assert_eq!(
        live["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["cpu"],
        "500m"
    );
    let plan = work.plan_exit();
    assert_eq!(plan.code, 0, "a diff after reading 500m back:\n{plan}");

    // The same quantity spelled the server's way is no change either; another one is.
    work.write(&limited_deployment(ns, "500m"));
    let plan = work.plan_exit();
    assert_eq!(plan.code, 0, "respelling an equal quantity is a change:\n{plan}");
    work.write(&limited_deployment(ns, "1"));
    let plan = work.plan_exit();
    assert_eq!(plan.code, 2, "a different quantity is no change:\n{plan}");
    work.apply_ok("cpu 1");
    assert_eq!(limits(&work)["cpu"], "1");
    let plan = work.plan_exit();
    assert_eq!(plan.code, 0, "not settled after cpu 1:\n{plan}");
}

/// What hashicorp's (legacy SDK) state holds where a configuration leaves things out: the zero
/// value of an unset field (`immutable = false`, a ClusterIP port's `node_port = 0`) and the
/// server's block where hashicorp computes it (a Deployment's `strategy`); the next plan is
/// empty, and a change elsewhere keeps them.
#[test]
fn a_state_holds_what_hashicorps_holds_for_what_the_configuration_leaves_out() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "sdk");
    let work = LiveDir::new(&unique_name("est"), cluster.kubeconfig());
    let ns = ns.name.as_str();
    let spec = "  spec {\n    selector = { app = \"limited\" }\n    port {\n      port = 80\n    }\n  }\n";
    let service = format!(
        "resource \"kubernetes_service_v1\" \"web\" {{\n{}{spec}}}\n",
        metadata("web", ns)
    );
    let settings = config_map("settings", "settings", ns, &[("a", "b")]);
    let config = |cpu: &str| format!("{settings}{service}{}", limited_deployment(ns, cpu));
    work.write(&config("1"));
    work.apply_ok("create");
    let settings = work.state_values("kubernetes_config_map.settings");
    assert_eq!(settings["immutable"], false, "{settings}");
    let web = work.state_values("kubernetes_service_v1.web");
    assert_eq!(web["spec"][0]["port"][0]["node_port"], 0, "{web}");
    let deployment = work.state_values("kubernetes_deployment_v1.limited");
    assert_eq!(
        deployment["spec"][0]["strategy"][0]["type"], "RollingUpdate",
        "the server's strategy: {deployment}"
    );
    let plan = work.plan_exit();
    assert_eq!(plan.code, 0, "a diff after the create:\n{plan}");

    work.write(&config("2"));
    work.apply_ok("update the cpu limit");
    let deployment = work.state_values("kubernetes_deployment_v1.limited");
    assert_eq!(deployment["spec"][0]["strategy"][0]["type"], "RollingUpdate");
    let plan = work.plan_exit();
    assert_eq!(plan.code, 0, "a diff after the update:\n{plan}");
}

/// A Job whose `manual_selector` turns on keeps its generated selector and is updated in
/// place, as the API server allows (hashicorp's schema has it ForceNew false): replacing it
/// would recreate the Job without a selector, which the API refuses.
#[test]
fn a_jobs_manual_selector_changes_in_place() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "jobsel");
    let work = LiveDir::new(&unique_name("jobsel"), cluster.kubeconfig());
    let job = |manual: bool| {
        format!(
            "resource \"kubernetes_job_v1\" \"once\" {{\n{}  wait_for_completion = false\n  spec {{\n    \
             manual_selector = {manual}\n    template {{\n      metadata {{}}\n      spec {{\n        \
             restart_policy = \"Never\"\n        container {{\n          name    = \"once\"\n          \
             image   = \"busybox\"\n          command = [\"true\"]\n        }}\n      }}\n    }}\n  }}\n}}\n",
            metadata("once", &ns.name)
        )
    };
    work.write(&job(false));
    work.apply_ok("a Job with a generated selector");
    let before = cluster.get_json(&["job", "once", "-n", &ns.name]);
    work.write(&job(true));
    work.apply_ok("manual_selector turned on");
    let after = cluster.get_json(&["job", "once", "-n", &ns.name]);
    assert_eq!(
        after["metadata"]["uid"], before["metadata"]["uid"],
        "the Job was replaced"
    );
    assert_eq!(after["spec"]["manualSelector"], true, "{after}");
    assert_eq!(after["spec"]["selector"], before["spec"]["selector"], "{after}");
    let plan = work.plan_exit();
    assert_eq!(plan.code, 0, "a diff after the update:\n{plan}");
}
