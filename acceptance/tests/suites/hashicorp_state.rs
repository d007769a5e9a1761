//! A state that hashicorp/kubernetes v3.2.1 itself wrote (`acceptance/fixtures/hashicorp-3.2.1`,
//! recorded from its binary against a kube-apiserver v1.36: a ConfigMap, a Secret, a Deployment
//! and a Service, with its schema versions, private timeouts and identities) moves in: over
//! objects written as hashicorp writes them (field manager `HashiCorp`, no estate label),
//! `terraform state replace-provider` and a plan that changes nothing the user wrote, one apply
//! that stamps the estate label, and an empty plan after it.

use std::fs;

use acceptance::Cluster;
use acceptance::hcl::{LiveDir, ScratchNamespace, unique_name};
use acceptance::migration::{create_as, fixture, move_in, objects_file, with_live_uids};
use serde_json::{Value, json};

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
fn recorded_state(cluster: &Cluster, ns: &str) -> Value {
    let state: Value = serde_json::from_str(&fixture("terraform.tfstate", ns)).expect("JSON state");
    with_live_uids(cluster, &state)
}

#[test]
fn a_state_hashicorps_binary_wrote_moves_in_with_an_empty_plan_after_one_stamp() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "hcstate");
    let ns = ns.name.as_str();
    let estate = unique_name("est");
    let work = LiveDir::new(&estate, cluster.kubeconfig());
    work.write(&fixture("main.tf", ns));

    let objects = objects(ns);
    create_as(
        &cluster,
        work.path(),
        objects.as_array().expect("objects"),
        "HashiCorp",
    )
    .unwrap_or_else(|e| panic!("{e}"));
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
    let manifest = objects_file(work.path(), &objects);
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
