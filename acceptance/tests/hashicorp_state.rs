//! A state that hashicorp/kubernetes v3.2.1 itself wrote (`acceptance/fixtures/hashicorp-3.2.1`,
//! recorded from its binary against a kube-apiserver v1.36: a ConfigMap, a Secret, a Deployment
//! and a Service, with its schema versions, private timeouts and identities) moves in: over
//! objects written as hashicorp writes them (field manager `HashiCorp`, no estate label),
//! `terraform state replace-provider` and a plan that changes nothing the user wrote, one apply
//! that stamps the estate label, and an empty plan after it.

use std::fs;
use std::path::Path;

use acceptance::Cluster;
use acceptance::hcl::{LiveDir, ScratchNamespace, unique_name};
use serde_json::{Value, json};

const HASHICORP: &str = "registry.terraform.io/hashicorp/kubernetes";
const LIVE: &str = "registry.terraform.io/choudoufu/live";

fn fixture(name: &str, ns: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/hashicorp-3.2.1")
        .join(name);
    fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
        .replace("__NAMESPACE__", ns)
}

/// The objects hashicorp's apply wrote, as its typed clients write them: one create each under
/// its field manager, without our label.
fn objects(ns: &str) -> Value {
    let meta = |name: &str| json!({"name": name, "namespace": ns});
    json!([
        {"apiVersion": "v1", "kind": "ConfigMap",
         "metadata": {"name": "x", "namespace": ns, "labels": {"app": "a"}, "annotations": {"b": "y"}},
         "data": {"j": "v"}},
        {"apiVersion": "v1", "kind": "Secret", "metadata": meta("s"), "type": "Opaque",
         "data": {"j": "dg=="}},
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta("d"),
         "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "d"}},
                  "template": {"metadata": {"labels": {"app": "d"}},
                               "spec": {"nodeSelector": {"kubernetes.io/os": "linux"},
                                        "containers": [{"name": "c", "image": "nginx",
                                                        "resources": {"limits": {"memory": "1536Mi"}}}]}}}},
        {"apiVersion": "v1", "kind": "Service", "metadata": meta("svc"),
         "spec": {"selector": {"app": "d"}, "ports": [{"port": 80, "targetPort": 8080}]}},
    ])
}

/// The recorded state with the uids and resource versions of this cluster's objects, which a
/// real estate's state has of its own.
/// What the stamp may change: the estate, and what the server's write renews.
const STAMP: &[&str] = &[
    "estate",
    "metadata.resource_version",
    "metadata.generation",
    // A manifest's `object` is what the server answers, refreshed by the write.
    "object",
];

/// The dotted paths (list indices left out) where `after` differs from `before`, leaving out
/// what `unknown` marks as known only after apply.
fn differ(at: &str, before: &Value, after: &Value, unknown: &Value, out: &mut Vec<String>) {
    if unknown == &Value::Bool(true) {
        if !STAMP.contains(&at) {
            out.push(format!("{at} (unknown)"));
        }
        return;
    }
    let join = |key: &str| {
        if at.is_empty() {
            key.to_string()
        } else {
            format!("{at}.{key}")
        }
    };
    match (before, after) {
        (Value::Object(b), Value::Object(a)) => {
            for key in b.keys().chain(a.keys().filter(|k| !b.contains_key(*k))) {
                let none = Value::Null;
                let (bv, av) = (b.get(key).unwrap_or(&none), a.get(key).unwrap_or(&none));
                differ(&join(key), bv, av, unknown.get(key).unwrap_or(&none), out);
            }
        }
        (Value::Array(b), Value::Array(a)) if b.len() == a.len() => {
            for (i, (bv, av)) in b.iter().zip(a).enumerate() {
                differ(at, bv, av, unknown.get(i).unwrap_or(&Value::Null), out);
            }
        }
        (b, a) if b != a => out.push(at.to_string()),
        _ => {}
    }
}

fn recorded_state(cluster: &Cluster, ns: &str) -> Value {
    let mut state: Value = serde_json::from_str(&fixture("terraform.tfstate", ns)).expect("JSON state");
    for resource in state["resources"].as_array_mut().expect("resources") {
        assert_eq!(resource["provider"], format!("provider[\"{HASHICORP}\"]"));
        let kind = match resource["type"].as_str().expect("a type") {
            "kubernetes_config_map_v1" => "configmap",
            "kubernetes_secret_v1" => "secret",
            "kubernetes_deployment_v1" => "deployment",
            _ => "service",
        };
        let meta = &mut resource["instances"][0]["attributes"]["metadata"][0];
        let name = meta["name"].as_str().expect("a name").to_string();
        let live = cluster.get_json(&[kind, &name, "-n", ns]);
        meta["uid"] = live["metadata"]["uid"].clone();
        meta["resource_version"] = live["metadata"]["resourceVersion"].clone();
    }
    state
}

/// `state replace-provider`, then the first plan: `updates` in-place updates whose only change
/// is the stamp, and the warning saying so.
fn move_in(work: &LiveDir, updates: usize) {
    let out = work.run(&["state", "replace-provider", "-auto-approve", HASHICORP, LIVE]);
    assert!(out.success(), "replace-provider failed:\n{out}");
    let (plan, summary) = work.engine().plan_json(&[]);
    assert!(plan.success(), "plan failed:\n{plan}");
    let summary = summary.expect("a plan");
    assert_eq!(summary.count("update"), updates, "{plan}");
    assert_eq!(summary.count("create") + summary.count("delete"), 0, "{plan}");
    assert!(
        plan.flat().contains("The next apply stamps the estate label"),
        "the plan does not say that the label will be stamped:\n{plan}"
    );
    for change in summary.raw["resource_changes"].as_array().expect("changes") {
        let (before, after) = (&change["change"]["before"], &change["change"]["after"]);
        let mut differences = Vec::new();
        differ(
            "",
            before,
            after,
            &change["change"]["after_unknown"],
            &mut differences,
        );
        assert!(
            differences.iter().all(|path| STAMP.contains(&path.as_str())),
            "{}: the first plan changes what the user wrote: {differences:?}\n{plan}",
            change["address"]
        );
    }
}

#[test]
fn a_state_hashicorps_binary_wrote_moves_in_with_an_empty_plan_after_one_stamp() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "hcstate");
    let ns = ns.name.as_str();
    let estate = unique_name("est");
    let work = LiveDir::new(&estate, cluster.kubeconfig());
    work.write(&fixture("main.tf", ns));

    // One YAML document each (JSON is YAML).
    let documents: Vec<String> = objects(ns)
        .as_array()
        .expect("objects")
        .iter()
        .map(Value::to_string)
        .collect();
    let manifest = work.path().join("objects.yaml");
    fs::write(&manifest, documents.join("\n---\n")).expect("objects.yaml");
    let path = manifest.to_string_lossy();
    cluster.kubectl_ok(&["create", "--field-manager=HashiCorp", "-f", &path]);
    let state = recorded_state(&cluster, ns);
    fs::write(work.path().join("terraform.tfstate"), state.to_string()).expect("terraform.tfstate");

    move_in(&work, 4);

    work.apply_ok("the stamp");
    for (kind, name) in [
        ("configmap", "x"),
        ("secret", "s"),
        ("deployment", "d"),
        ("service", "svc"),
    ] {
        let live = cluster.get_json(&[kind, name, "-n", ns]);
        assert_eq!(
            live["metadata"]["labels"]["tofu-estate"],
            estate.as_str(),
            "{kind} {name}: {live}"
        );
    }
    let live = cluster.get_json(&["configmap", "x", "-n", ns]);
    assert_eq!(live["data"], json!({"j": "v"}), "{live}");
    let again = work.plan_exit();
    assert_eq!(again.code, 0, "the plan after the stamp is not empty:\n{again}");
}

/// hashicorp's `kubernetes_manifest` (its muxed manifest provider, schema version 1, `object`
/// typed from the kind's OpenAPI) over objects it server-side applied as field manager
/// `Terraform`.
#[test]
fn a_manifest_state_hashicorps_binary_wrote_moves_in_too() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "hcmanifest");
    let ns = ns.name.as_str();
    let estate = unique_name("est");
    let work = LiveDir::new(&estate, cluster.kubeconfig());
    work.write(&fixture("manifest.tf", ns));
    let objects = [
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": "mf", "namespace": ns, "labels": {"app": "m"}}, "data": {"a": "1"}}),
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "md", "namespace": ns},
               "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "md"}},
                        "template": {"metadata": {"labels": {"app": "md"}},
                                     "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}),
    ];
    let documents: Vec<String> = objects.iter().map(Value::to_string).collect();
    let manifest = work.path().join("objects.yaml");
    fs::write(&manifest, documents.join("\n---\n")).expect("objects.yaml");
    let path = manifest.to_string_lossy();
    cluster.kubectl_ok(&["apply", "--server-side", "--field-manager=Terraform", "-f", &path]);
    fs::write(
        work.path().join("terraform.tfstate"),
        fixture("manifest.tfstate", ns),
    )
    .expect("state");

    move_in(&work, 2);
    work.apply_ok("the stamp");
    for (kind, name) in [("configmap", "mf"), ("deployment", "md")] {
        let live = cluster.get_json(&[kind, name, "-n", ns]);
        assert_eq!(
            live["metadata"]["labels"]["tofu-estate"],
            estate.as_str(),
            "{kind} {name}: {live}"
        );
    }
    let again = work.plan_exit();
    assert_eq!(again.code, 0, "the plan after the stamp is not empty:\n{again}");
}
