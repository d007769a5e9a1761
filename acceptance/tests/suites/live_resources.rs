//! Every resource provider-live serves, through its whole life with the real engine: create,
//! an empty plan, an in-place update, a replacement (new name), an import whose state equals the
//! state it replaces in every attribute, an out-of-band delete the next plan proposes to
//! create again, the re-create, and destroy. Each test has its own working folder and
//! namespace, so the tests run in parallel on one cluster (a real one given by KUBECONFIG,
//! else the in-memory test server). And a Deployment's apply waits for its rollout, where Pods
//! can run.

use acceptance::Cluster;
use acceptance::hcl::{LiveDir, ScratchNamespace, metadata, quote, unique_name};
use acceptance::imports;
use serde_json::Value;

/// One resource type under test.
struct Case {
    /// Resource type, e.g. `kubernetes_config_map`.
    type_name: &'static str,
    /// What kubectl calls the object, e.g. `configmap`.
    kubectl: &'static str,
    namespaced: bool,
    /// The resource's body for object `name` in namespace `ns` at revision 1 or 2 (the update).
    body: fn(name: &str, ns: &str, rev: u8) -> String,
    /// JSON pointer into the live object, and what it holds at revision 1 and 2.
    probe: &'static str,
    expected: [&'static str; 2],
    /// The import id of object `name` in `ns`.
    import_id: fn(name: &str, ns: &str) -> String,
}

fn namespaced_id(name: &str, ns: &str) -> String {
    format!("{ns}/{name}")
}

fn namespace_body(name: &str, _ns: &str, rev: u8) -> String {
    format!(
        "  metadata {{\n    name   = {}\n    labels = {{ team = \"t{rev}\" }}\n  }}\n",
        quote(name)
    )
}

fn config_map_body(name: &str, ns: &str, rev: u8) -> String {
    format!("{}  data = {{ k = \"v{rev}\" }}\n", metadata(name, ns))
}

fn secret_body(name: &str, ns: &str, rev: u8) -> String {
    format!(
        "{}  data = {{ password = \"s3cret-{rev}\" }}\n",
        metadata(name, ns)
    )
}

fn service_body(name: &str, ns: &str, rev: u8) -> String {
    format!(
        "{}  spec {{\n    selector = {{ app = \"it\" }}\n    port {{\n      name        = \"http\"\n      \
         port        = {}\n      target_port = \"8080\"\n    }}\n  }}\n",
        metadata(name, ns),
        80 + u16::from(rev)
    )
}

fn service_account_body(name: &str, ns: &str, rev: u8) -> String {
    format!(
        "{}  automount_service_account_token = {}\n",
        metadata(name, ns),
        rev == 1
    )
}

/// One replica; each apply waits for its rollout, and the import sees the same
/// `wait_for_rollout`.
fn deployment_body(name: &str, ns: &str, rev: u8) -> String {
    format!(
        "{}  spec {{\n    replicas = \"1\"\n    selector {{\n      match_labels = {{ app = \"it\" }}\n    }}\n    \
         template {{\n      metadata {{\n        labels = {{ app = \"it\" }}\n      }}\n      spec {{\n        \
         container {{\n          name  = \"main\"\n          image = \"registry.k8s.io/pause:3.10\"\n          \
         env {{\n            name  = \"REV\"\n            value = \"r{rev}\"\n          }}\n        }}\n      \
         }}\n    }}\n  }}\n",
        metadata(name, ns)
    )
}

fn hpa_body(name: &str, ns: &str, rev: u8) -> String {
    format!(
        "{}  spec {{\n    min_replicas = 1\n    max_replicas = {}\n    scale_target_ref {{\n      \
         api_version = \"apps/v1\"\n      kind        = \"Deployment\"\n      name        = \"web\"\n    }}\n    \
         metric {{\n      type = \"Resource\"\n      resource {{\n        name = \"cpu\"\n        target {{\n          \
         type                = \"Utilization\"\n          average_utilization = 70\n        }}\n      }}\n    }}\n  }}\n",
        metadata(name, ns),
        4 + rev
    )
}

fn network_policy_body(name: &str, ns: &str, rev: u8) -> String {
    format!(
        "{}  spec {{\n    pod_selector {{\n      match_labels = {{ app = \"it\" }}\n    }}\n    ingress {{\n      \
         ports {{\n        port     = \"808{rev}\"\n        protocol = \"TCP\"\n      }}\n    }}\n    \
         policy_types = [\"Ingress\"]\n  }}\n",
        metadata(name, ns)
    )
}

fn manifest_body(name: &str, ns: &str, rev: u8) -> String {
    format!(
        "  manifest = {{\n    apiVersion = \"v1\"\n    kind       = \"ConfigMap\"\n    metadata = {{\n      \
         name      = {}\n      namespace = {}\n    }}\n    data = {{ k = \"v{rev}\" }}\n  }}\n",
        quote(name),
        quote(ns)
    )
}

/// Every value as text: strings as they are, anything else as JSON.
fn text(value: &Value) -> String {
    value
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| value.to_string())
}

/// The whole life of one resource (see the module doc).
fn lifecycle(case: &Case) {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "live");
    let estate = unique_name("est");
    let address = format!("{}.it", case.type_name);
    let work = LiveDir::new(&estate, cluster.kubeconfig());
    let config = |name: &str, rev: u8, extra: &str| {
        format!(
            "resource \"{}\" \"it\" {{\n{}}}\n{extra}",
            case.type_name,
            (case.body)(name, &ns.name, rev)
        )
    };
    // Cluster-scoped objects (namespaces) must not collide across tests either.
    let first = if case.namespaced {
        "first".to_string()
    } else {
        unique_name("first")
    };
    let second = if case.namespaced {
        "second".to_string()
    } else {
        unique_name("second")
    };
    let get = |name: &str| {
        let mut args = vec![case.kubectl, name];
        if case.namespaced {
            args.extend(["-n", ns.name.as_str()]);
        }
        let mut all = vec!["get"];
        all.extend(&args);
        all.extend(["-o", "json", "--ignore-not-found"]);
        let out = cluster.kubectl(&all);
        assert!(out.success(), "kubectl {}:\n{out}", all.join(" "));
        (!out.stdout.trim().is_empty())
            .then(|| serde_json::from_str::<Value>(&out.stdout).expect("kubectl printed JSON"))
    };
    let probe = |name: &str| {
        let object = get(name).unwrap_or_else(|| panic!("{} {name} does not exist", case.kubectl));
        assert_eq!(
            object.pointer("/metadata/labels/tofu-estate"),
            Some(&Value::from(estate.as_str())),
            "the object carries the estate label: {object}"
        );
        object.pointer(case.probe).map(text).unwrap_or_default()
    };

    // Create, then nothing to do.
    work.write(&config(&first, 1, ""));
    let out = work.apply_ok("create");
    assert!(
        out.stdout.contains("Resources: 1 added, 0 changed, 0 destroyed"),
        "{out}"
    );
    assert_eq!(probe(&first), case.expected[0], "created as configured");
    let plan = work.plan_exit();
    assert_eq!(plan.code, 0, "plan after create is not empty:\n{plan}");

    // In-place update.
    work.write(&config(&first, 2, ""));
    let out = work.apply_ok("update");
    assert!(
        out.stdout.contains("Resources: 0 added, 1 changed, 0 destroyed"),
        "not in place:\n{out}"
    );
    assert_eq!(probe(&first), case.expected[1], "updated in place");

    // A new name replaces the object.
    work.write(&config(&second, 2, ""));
    let out = work.apply_ok("replace");
    assert!(
        out.stdout.contains("Resources: 1 added, 0 changed, 1 destroyed"),
        "not replaced:\n{out}"
    );
    assert_eq!(probe(&second), case.expected[1], "the replacement");
    assert!(get(&first).is_none(), "the replaced object is gone");

    // Import: forget the object, import it with an import block, compare every attribute
    // with the state as a refresh leaves it (controllers move e.g. resourceVersion after apply).
    let refresh = work.run(&["apply", "-refresh-only", "-auto-approve", "-input=false"]);
    assert!(refresh.success(), "refresh failed:\n{refresh}");
    let before = work.state_values(&address);
    assert!(before.is_object(), "{address} is in state");
    let rm = work.run(&["state", "rm", &address]);
    assert!(rm.success(), "state rm:\n{rm}");
    let import = format!(
        "import {{\n  to = {address}\n  id = {}\n}}\n",
        quote(&(case.import_id)(&second, &ns.name))
    );
    work.write(&config(&second, 2, &import));
    let out = work.apply_ok("import");
    assert!(
        out.stdout
            .contains("Resources: 1 imported, 0 added, 0 changed, 0 destroyed"),
        "import was not a pure import:\n{out}"
    );
    let after = work.state_values(&address);
    assert_eq!(
        imports::without_settings(&after),
        imports::without_settings(&before),
        "state after import differs from the state before"
    );

    // Deleted behind the engine's back: the next plan creates it again.
    work.write(&config(&second, 2, ""));
    let mut delete = vec!["delete", case.kubectl, second.as_str()];
    if case.namespaced {
        delete.extend(["-n", ns.name.as_str()]);
    }
    let out = cluster.kubectl(&delete);
    assert!(out.success(), "kubectl delete:\n{out}");
    let (plan, summary) = work.engine().plan_json(&["-parallelism=4"]);
    let summary = summary.unwrap_or_else(|| panic!("no plan written:\n{plan}"));
    assert_eq!(
        summary.actions(&address),
        Some(&["create".to_string()][..]),
        "plan after an out-of-band delete:\n{plan}"
    );
    let out = work.apply_ok("re-create");
    assert!(
        out.stdout.contains("Resources: 1 added, 0 changed, 0 destroyed"),
        "{out}"
    );
    assert_eq!(probe(&second), case.expected[1], "re-created");

    // Destroy: the object is gone.
    let out = work.run(&["destroy", "-auto-approve", "-input=false", "-parallelism=4"]);
    assert!(out.success(), "destroy failed:\n{out}");
    assert!(get(&second).is_none(), "destroy left the object behind");
}

#[test]
fn namespace_lifecycle() {
    lifecycle(&Case {
        type_name: "kubernetes_namespace",
        kubectl: "namespace",
        namespaced: false,
        body: namespace_body,
        probe: "/metadata/labels/team",
        expected: ["t1", "t2"],
        import_id: |name, _| name.to_string(),
    });
}

#[test]
fn config_map_lifecycle() {
    lifecycle(&Case {
        type_name: "kubernetes_config_map",
        kubectl: "configmap",
        namespaced: true,
        body: config_map_body,
        probe: "/data/k",
        expected: ["v1", "v2"],
        import_id: namespaced_id,
    });
}

#[test]
fn secret_lifecycle() {
    lifecycle(&Case {
        type_name: "kubernetes_secret",
        kubectl: "secret",
        namespaced: true,
        body: secret_body,
        probe: "/data/password",
        // base64 of "s3cret-1" and "s3cret-2"
        expected: ["czNjcmV0LTE=", "czNjcmV0LTI="],
        import_id: namespaced_id,
    });
}

#[test]
fn service_lifecycle() {
    lifecycle(&Case {
        type_name: "kubernetes_service",
        kubectl: "service",
        namespaced: true,
        body: service_body,
        probe: "/spec/ports/0/port",
        expected: ["81", "82"],
        import_id: namespaced_id,
    });
}

#[test]
fn service_account_lifecycle() {
    lifecycle(&Case {
        type_name: "kubernetes_service_account",
        kubectl: "serviceaccount",
        namespaced: true,
        body: service_account_body,
        probe: "/automountServiceAccountToken",
        expected: ["true", "false"],
        import_id: namespaced_id,
    });
}

#[test]
fn deployment_lifecycle() {
    lifecycle(&Case {
        type_name: "kubernetes_deployment",
        kubectl: "deployment",
        namespaced: true,
        body: deployment_body,
        probe: "/spec/template/spec/containers/0/env/0/value",
        expected: ["r1", "r2"],
        import_id: namespaced_id,
    });
}

#[test]
fn horizontal_pod_autoscaler_v2_lifecycle() {
    lifecycle(&Case {
        type_name: "kubernetes_horizontal_pod_autoscaler_v2",
        kubectl: "horizontalpodautoscalers.v2.autoscaling",
        namespaced: true,
        body: hpa_body,
        probe: "/spec/maxReplicas",
        expected: ["5", "6"],
        import_id: namespaced_id,
    });
}

#[test]
fn network_policy_lifecycle() {
    lifecycle(&Case {
        type_name: "kubernetes_network_policy",
        kubectl: "networkpolicy",
        namespaced: true,
        body: network_policy_body,
        probe: "/spec/ingress/0/ports/0/port",
        expected: ["8081", "8082"],
        import_id: namespaced_id,
    });
}

#[test]
fn manifest_lifecycle() {
    lifecycle(&Case {
        type_name: "kubernetes_manifest",
        kubectl: "configmap",
        namespaced: true,
        body: manifest_body,
        probe: "/data/k",
        expected: ["v1", "v2"],
        import_id: |name, ns| format!("apiVersion=v1,kind=ConfigMap,namespace={ns},name={name}"),
    });
}

/// The rollout wait (on by default): an apply of a Deployment returns only once every replica
/// is updated and available.
#[test]
fn wait_deployment_apply_returns_once_rolled_out() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "roll");
    let work = LiveDir::new(&unique_name("est"), cluster.kubeconfig());
    let body = deployment_body("web", &ns.name, 1).replace("replicas = \"1\"", "replicas = \"2\"");
    work.write(&format!(
        "resource \"kubernetes_deployment\" \"web\" {{\n{body}}}\n"
    ));
    work.apply_ok("create with the rollout wait");
    let live = cluster.get_json(&["deployment", "web", "-n", &ns.name]);
    let status = &live["status"];
    assert_eq!(
        status["observedGeneration"], live["metadata"]["generation"],
        "{status}"
    );
    assert_eq!(status["updatedReplicas"], 2, "{status}");
    assert_eq!(status["availableReplicas"], 2, "{status}");
}
