//! Requests kube-apiserver refuses, refused alike by the test server. Each case is one the test
//! server once accepted, so that a provider bug it should have caught passed there and failed
//! only on a real cluster; run on both servers, these keep the two in step.

use std::fs;

use acceptance::Cluster;
use acceptance::hcl::ScratchNamespace;

/// Sends `object` (JSON) with `kubectl create --raw <path>`; returns kubectl's output.
fn post(cluster: &Cluster, path: &str, object: &serde_json::Value) -> acceptance::EngineOutput {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let file = dir.path().join("object.json");
    fs::write(&file, object.to_string()).expect("the object's file");
    cluster.kubectl(&["create", "--raw", path, "-f", &file.to_string_lossy()])
}

#[test]
fn the_cluster_wide_path_of_a_namespaced_kind_refuses_a_create() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "strict");
    let config_map = serde_json::json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "nowhere", "namespace": ns.name}, "data": {"a": "b"}
    });
    let out = post(&cluster, "/api/v1/configmaps", &config_map);
    assert!(
        !out.success(),
        "a create on /api/v1/configmaps was accepted:\n{out}"
    );
    assert!(
        out.flat()
            .contains("the server does not allow this method on the requested resource"),
        "not a 405:\n{out}"
    );
    let listed = cluster.kubectl(&[
        "get",
        "configmap",
        "nowhere",
        "-n",
        &ns.name,
        "--ignore-not-found",
    ]);
    assert!(
        listed.stdout.trim().is_empty(),
        "the ConfigMap was created:\n{listed}"
    );
    // The same create on the namespace's own collection is fine.
    let path = format!("/api/v1/namespaces/{}/configmaps", ns.name);
    let out = post(&cluster, &path, &config_map);
    assert!(out.success(), "a create on {path}:\n{out}");
}

#[test]
fn a_service_that_is_no_load_balancer_refuses_allocate_load_balancer_node_ports() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "strict");
    let service = |kind: &str| {
        serde_json::json!({
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": format!("svc-{}", kind.to_lowercase()), "namespace": ns.name},
            "spec": {"type": kind, "allocateLoadBalancerNodePorts": true, "ports": [{"port": 80}]}
        })
    };
    let path = format!("/api/v1/namespaces/{}/services", ns.name);
    let out = post(&cluster, &path, &service("ClusterIP"));
    assert!(
        !out.success(),
        "a ClusterIP Service with allocateLoadBalancerNodePorts:\n{out}"
    );
    assert!(
        out.flat()
            .contains("may only be used when `type` is 'LoadBalancer'"),
        "not the API server's reason:\n{out}"
    );
    let out = post(&cluster, &path, &service("LoadBalancer"));
    assert!(
        out.success(),
        "a LoadBalancer Service with allocateLoadBalancerNodePorts:\n{out}"
    );
}

#[test]
fn an_endpoints_address_refuses_an_empty_node_name() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "strict");
    let endpoints = |node: Option<&str>| {
        let mut address = serde_json::json!({"ip": "10.0.0.1"});
        if let Some(node) = node {
            address["nodeName"] = serde_json::json!(node);
        }
        serde_json::json!({
            "apiVersion": "v1", "kind": "Endpoints",
            "metadata": {"name": format!("db-{}", node.map_or("none", |n| if n.is_empty() { "empty" } else { n })), "namespace": ns.name},
            "subsets": [{"addresses": [address], "ports": [{"port": 5432}]}]
        })
    };
    let path = format!("/api/v1/namespaces/{}/endpoints", ns.name);
    let out = post(&cluster, &path, &endpoints(Some("")));
    assert!(
        !out.success(),
        "an address with nodeName \"\" was accepted:\n{out}"
    );
    assert!(out.flat().contains("nodeName"), "not about nodeName:\n{out}");
    let out = post(&cluster, &path, &endpoints(None));
    assert!(out.success(), "an address without a node name:\n{out}");
}
