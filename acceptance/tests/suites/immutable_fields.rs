//! Issue 10: a change of a field the API server will not update plans a replacement with the
//! real engine, for every Kubernetes kind that has such fields.
//!
//! The immutable fields are the `immutable` rows of provider-live's behaviour table
//! (`provider-live/catalog/behaviour.tsv`, in its notation: `spec.selector`, blocks are lists of
//! one), read here from the file. [`CASES`] has one resource per kind of the table, whose body
//! changes one of its kind's fields there ([`the_cases_cover_every_kind_of_the_table`] holds
//! both to the file). The test checks what the engine shows: all of them are
//! created in one configuration, then each one's immutable field changes; the plan must replace
//! every one of them (`["delete","create"]`), that path among the ones it names as the reason
//! (`replace_paths`), the apply must succeed, the next plan must be empty, and destroy must
//! clean up. Every wait is on, as by default: rollouts, the Job's completion, the Pod's phase,
//! the request's certificate; only the claim, whose classes no provisioner serves (the point is
//! the class's name), does not wait to be bound. A replaced volume or claim keeps its name, so
//! its old object must be gone (the protection controllers let it go) before the new one is
//! created.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use acceptance::hcl::{LiveDir, ScratchNamespace, quote, unique_name};
use acceptance::{Cluster, PlanSummary, paths};
use serde_json::{Value, json};

/// One kind: the resource type, the immutable path its body changes (one of the kind's rows of
/// the behaviour table) and the resource's body (inside `resource "<type>" "<kind>" { ... }`)
/// before and after the change.
struct Case {
    kind: &'static str,
    type_name: &'static str,
    path: &'static str,
    body: fn(&Names, Step) -> String,
}

/// The namespace of the namespaced objects and a unique prefix for cluster-scoped ones.
struct Names {
    namespace: String,
    unique: String,
}

#[derive(Clone, Copy)]
enum Step {
    Before,
    After,
}

impl Step {
    /// `before` or `after`, by step.
    fn pick<'a>(self, before: &'a str, after: &'a str) -> &'a str {
        match self {
            Step::Before => before,
            Step::After => after,
        }
    }
}

/// A pod template labelled `app = <app>`, one container.
fn pod_template(app: &str, image: &str) -> String {
    format!(
        r#"    template {{
      metadata {{
        labels = {{ app = "{app}" }}
      }}
      spec {{
        container {{
          name  = "main"
          image = "{image}"
        }}
      }}
    }}"#
    )
}

/// A DaemonSet's `spec.selector` block selecting `app`, and its pods on Linux nodes only (as
/// the cluster's own; other tests' scratch nodes would get pods no kubelet runs).
fn selected_on_linux(app: &str) -> String {
    selected(app).replacen(
        "      spec {\n",
        "      spec {\n        node_selector = { \"kubernetes.io/os\" = \"linux\" }\n",
        1,
    )
}

/// A workload kind whose `spec.selector` block selects `app`.
fn selected(app: &str) -> String {
    format!(
        "    selector {{\n      match_labels = {{ app = \"{app}\" }}\n    }}\n{}",
        pod_template(app, "nginx:1.27")
    )
}

fn metadata(n: &Names, name: &str) -> String {
    format!(
        "  metadata {{\n    name      = \"{name}\"\n    namespace = {}\n  }}",
        quote(&n.namespace)
    )
}

/// A number of 1-254 unique to the run, for addresses (cluster-wide names).
fn octet(n: &Names) -> u8 {
    n.unique
        .bytes()
        .fold(7u8, |a, b| a.wrapping_mul(31).wrapping_add(b))
        % 254
        + 1
}

fn cluster_metadata(n: &Names, suffix: &str) -> String {
    format!("  metadata {{\n    name = \"{}-{suffix}\"\n  }}", n.unique)
}

/// The certificate request of the corpus's `kubernetes_certificate_signing_request_v1.tf`.
static CSR: LazyLock<String> = LazyLock::new(|| {
    let path = paths::workspace_root().join("acceptance/corpus/kubernetes_certificate_signing_request_v1.tf");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .skip_while(|l| !l.starts_with("-----BEGIN CERTIFICATE REQUEST-----"))
        .collect();
    let end = lines
        .iter()
        .position(|l| l.starts_with("-----END CERTIFICATE REQUEST-----"))
        .unwrap_or_else(|| panic!("{} holds no certificate request", path.display()));
    lines[..=end].join("\n") + "\n"
});

/// The `immutable` rows of the behaviour table: each kind's paths, in the table's order.
static IMMUTABLE: LazyLock<BTreeMap<String, Vec<String>>> = LazyLock::new(|| {
    let path = paths::workspace_root().join("provider-live/catalog/behaviour.tsv");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        if let [kind, "immutable", field, ..] = line.split('\t').collect::<Vec<_>>()[..] {
            out.entry(kind.to_string()).or_default().push(field.to_string());
        }
    }
    out
});

const CASES: &[Case] = &[
    Case {
        kind: "Deployment",
        type_name: "kubernetes_deployment_v1",
        path: "spec.selector",
        body: |n, s| {
            format!(
                "{}\n  spec {{\n    replicas = 1\n{}\n  }}",
                metadata(n, "deployment"),
                selected(s.pick("deployment-a", "deployment-b"))
            )
        },
    },
    Case {
        kind: "DaemonSet",
        type_name: "kubernetes_daemon_set_v1",
        path: "spec.selector",
        body: |n, s| {
            format!(
                "{}\n  spec {{\n{}\n  }}",
                metadata(n, "daemon-set"),
                selected_on_linux(s.pick("daemon-set-a", "daemon-set-b"))
            )
        },
    },
    Case {
        kind: "ReplicationController",
        type_name: "kubernetes_replication_controller_v1",
        path: "spec.selector",
        body: |n, s| {
            let app = s.pick("controller-a", "controller-b");
            format!(
                "{}\n  spec {{\n    replicas = 0\n    selector = {{ app = \"{app}\" }}\n{}\n  }}",
                metadata(n, "controller"),
                pod_template(app, "nginx:1.27")
            )
        },
    },
    Case {
        kind: "StatefulSet",
        type_name: "kubernetes_stateful_set_v1",
        path: "spec.service_name",
        body: |n, s| {
            format!(
                "{}\n  spec {{\n    replicas     = 1\n    service_name = \"{}\"\n{}\n  }}",
                metadata(n, "stateful-set"),
                s.pick("first", "second"),
                selected("stateful-set")
            )
        },
    },
    Case {
        kind: "Job",
        type_name: "kubernetes_job_v1",
        path: "spec.template",
        body: |n, s| {
            format!(
                r#"{}
  spec {{
    template {{
      metadata {{}}
      spec {{
        restart_policy = "Never"
        container {{
          name    = "main"
          image   = "busybox:1.36"
          command = ["echo", "{}"]
        }}
      }}
    }}
  }}"#,
                metadata(n, "job"),
                s.pick("one", "two")
            )
        },
    },
    Case {
        kind: "Service",
        type_name: "kubernetes_service_v1",
        path: "spec.cluster_ip",
        // The address the server allocated, then none (a headless service).
        body: |n, s| {
            format!(
                "{}\n  spec {{\n    selector = {{ app = \"service\" }}\n{}    port {{\n      port = 80\n    }}\n  }}",
                metadata(n, "service"),
                s.pick("", "    cluster_ip = \"None\"\n")
            )
        },
    },
    Case {
        kind: "PersistentVolumeClaim",
        type_name: "kubernetes_persistent_volume_claim_v1",
        path: "spec.storage_class_name",
        // Classes of their own that no provisioner serves: the claim stays Pending, so it does
        // not wait to be bound (the one wait off here; the point is the class's name).
        body: |n, s| {
            format!(
                r#"{}
  spec {{
    access_modes       = ["ReadWriteOnce"]
    storage_class_name = "{}-{}"
    resources {{
      requests = {{ storage = "1Gi" }}
    }}
  }}
  wait_until_bound = false"#,
                metadata(n, "claim"),
                n.unique,
                s.pick("slow", "fast")
            )
        },
    },
    Case {
        kind: "PersistentVolume",
        type_name: "kubernetes_persistent_volume_v1",
        path: "spec.persistent_volume_source",
        // A storage class of its own, so that no other test's claim binds it.
        body: |n, s| {
            format!(
                r#"{}
  spec {{
    capacity           = {{ storage = "1Gi" }}
    access_modes       = ["ReadWriteOnce"]
    storage_class_name = "{}-volume"
    persistent_volume_source {{
      host_path {{
        path = "/data/{}"
      }}
    }}
  }}"#,
                cluster_metadata(n, "volume"),
                n.unique,
                s.pick("one", "two")
            )
        },
    },
    Case {
        kind: "RoleBinding",
        type_name: "kubernetes_role_binding_v1",
        path: "role_ref",
        body: |n, s| {
            format!(
                r#"{}
  role_ref {{
    api_group = "rbac.authorization.k8s.io"
    kind      = "ClusterRole"
    name      = "{}"
  }}
  subject {{
    kind      = "ServiceAccount"
    name      = "default"
    namespace = {}
  }}"#,
                metadata(n, "role-binding"),
                s.pick("view", "edit"),
                quote(&n.namespace)
            )
        },
    },
    Case {
        kind: "ClusterRoleBinding",
        type_name: "kubernetes_cluster_role_binding_v1",
        path: "role_ref",
        body: |n, s| {
            format!(
                r#"{}
  role_ref {{
    api_group = "rbac.authorization.k8s.io"
    kind      = "ClusterRole"
    name      = "{}"
  }}
  subject {{
    kind      = "ServiceAccount"
    name      = "default"
    namespace = {}
  }}"#,
                cluster_metadata(n, "cluster-role-binding"),
                s.pick("view", "edit"),
                quote(&n.namespace)
            )
        },
    },
    Case {
        kind: "IPAddress",
        type_name: "kubernetes_ip_address_v1",
        path: "spec.parent_ref",
        // The object's name is the address: unique to the run like the other names.
        body: |n, s| {
            format!(
                r#"  metadata {{
    name = "10.252.{}.{}"
  }}
  spec {{
    parent_ref {{
      resource  = "services"
      namespace = {}
      name      = "{}"
    }}
  }}"#,
                octet(n),
                octet(n) / 2 + 1,
                quote(&n.namespace),
                s.pick("first", "second")
            )
        },
    },
    Case {
        kind: "ResourceClaim",
        type_name: "kubernetes_resource_claim_v1",
        path: "spec",
        body: |n, s| {
            format!(
                "{}\n  spec {{\n    devices {{\n      request {{\n        name = \"{}\"\n        exactly {{\n          device_class_name = \"gpu.example.com\"\n        }}\n      }}\n    }}\n  }}",
                metadata(n, "claim"),
                s.pick("gpu", "accelerator")
            )
        },
    },
    Case {
        kind: "ResourceClaimTemplate",
        type_name: "kubernetes_resource_claim_template_v1",
        path: "spec",
        body: |n, s| {
            format!(
                "{}\n  spec {{\n    spec {{\n      devices {{\n        request {{\n          name = \"{}\"\n          exactly {{\n            device_class_name = \"gpu.example.com\"\n          }}\n        }}\n      }}\n    }}\n  }}",
                metadata(n, "claim-template"),
                s.pick("gpu", "accelerator")
            )
        },
    },
    Case {
        kind: "ResourceSlice",
        type_name: "kubernetes_resource_slice_v1",
        path: "spec.driver",
        body: |n, s| {
            format!(
                r#"{}
  spec {{
    driver    = "{}.example.com"
    all_nodes = true
    pool {{
      name                 = "pool"
      generation           = 1
      resource_slice_count = 1
    }}
    device {{
      name = "dev-0"
    }}
  }}"#,
                cluster_metadata(n, "resource-slice"),
                s.pick("first", "second")
            )
        },
    },
    Case {
        kind: "StorageClass",
        type_name: "kubernetes_storage_class_v1",
        path: "parameters",
        body: |n, s| {
            format!(
                "{}\n  storage_provisioner = \"example.com/none\"\n  parameters          = {{ tier = \"{}\" }}",
                cluster_metadata(n, "storage-class"),
                s.pick("gold", "silver")
            )
        },
    },
    Case {
        kind: "PriorityClass",
        type_name: "kubernetes_priority_class_v1",
        path: "value",
        body: |n, s| {
            format!(
                "{}\n  value = {}",
                cluster_metadata(n, "priority-class"),
                s.pick("1000", "1001")
            )
        },
    },
    Case {
        kind: "CertificateSigningRequest",
        type_name: "kubernetes_certificate_signing_request_v1",
        path: "spec",
        // Approved, and signed by the cluster's signer for API clients.
        body: |n, s| {
            format!(
                "{}\n  spec {{\n    signer_name = \"kubernetes.io/kube-apiserver-client\"\n    usages      = {}\n    request     = {}\n  }}",
                cluster_metadata(n, "request"),
                s.pick(r#"["client auth"]"#, r#"["client auth", "digital signature"]"#),
                quote(&CSR)
            )
        },
    },
    Case {
        kind: "EndpointSlice",
        type_name: "kubernetes_endpoint_slice_v1",
        path: "address_type",
        body: |n, s| {
            format!(
                r#"{}
  address_type = "{}"
  endpoint {{
    addresses = ["{}"]
  }}
  port {{
    name         = "http"
    port         = "80"
    app_protocol = "http"
  }}"#,
                metadata(n, "slice"),
                s.pick("IPv4", "IPv6"),
                s.pick("10.1.2.3", "fd00::3")
            )
        },
    },
    Case {
        kind: "IngressClass",
        type_name: "kubernetes_ingress_class_v1",
        path: "spec.controller",
        body: |n, s| {
            format!(
                "{}\n  spec {{\n    controller = \"example.com/{}\"\n  }}",
                cluster_metadata(n, "ingress-class"),
                s.pick("first", "second")
            )
        },
    },
    Case {
        kind: "RuntimeClass",
        type_name: "kubernetes_runtime_class_v1",
        path: "handler",
        body: |n, s| {
            format!(
                "{}\n  handler = \"{}\"",
                cluster_metadata(n, "runtime-class"),
                s.pick("runc", "crun")
            )
        },
    },
    Case {
        kind: "Pod",
        type_name: "kubernetes_pod_v1",
        path: "spec",
        body: |n, s| {
            format!(
                r#"{}
  spec {{
    container {{
      name  = "main"
      image = "nginx:{}"
    }}
  }}"#,
                metadata(n, "pod"),
                s.pick("1.27", "1.28")
            )
        },
    },
];

/// Kinds whose deleted object a controller holds by a finalizer until nothing uses it
/// (`kubernetes.io/vac-protection`, the ServiceCIDR controller's), so that a replacement under
/// the same name waits for that controller: their replacement is planned and checked, not
/// applied (`make test-real`'s control plane runs neither controller: ../shared/realk8s/README).
const HELD: &[Case] = &[
    Case {
        kind: "VolumeAttributesClass",
        type_name: "kubernetes_volume_attributes_class_v1",
        path: "parameters",
        body: |n, s| {
            format!(
                "{}\n  driver_name = \"csi.example.com\"\n  parameters  = {{ iops = \"{}\" }}",
                cluster_metadata(n, "volume-attributes"),
                s.pick("3000", "6000")
            )
        },
    },
    Case {
        kind: "ServiceCIDR",
        type_name: "kubernetes_service_cidr_v1",
        path: "spec.cidrs",
        body: |n, s| {
            format!(
                "{}\n  spec {{\n    cidrs = [\"10.{}.{}.0/24\"]\n  }}",
                cluster_metadata(n, "service-cidr"),
                s.pick("253", "254"),
                octet(n)
            )
        },
    },
];

/// The resource name of a case's object in the configuration.
fn label(case: &Case) -> String {
    case.kind.to_lowercase()
}

fn address(case: &Case) -> String {
    format!("{}.{}", case.type_name, label(case))
}

fn configuration(cases: &[Case], names: &Names, step: Step) -> String {
    let resources: Vec<String> = cases
        .iter()
        .map(|case| {
            format!(
                "resource \"{}\" \"{}\" {{\n{}\n}}\n",
                case.type_name,
                label(case),
                (case.body)(names, step)
            )
        })
        .collect();
    resources.join("\n")
}

/// A path in the behaviour table's notation as `show -json` writes it: `spec.selector` is
/// `["spec", 0, "selector"]` (blocks are lists of one).
fn json_path(dotted: &str) -> Value {
    let mut steps = Vec::new();
    for (i, part) in dotted.split('.').enumerate() {
        if i > 0 {
            steps.push(json!(0));
        }
        steps.push(json!(part));
    }
    Value::Array(steps)
}

/// Destroys what the configuration created when dropped, also when the test fails, so that
/// no cluster-scoped object outlives a failed run on a real cluster.
struct DestroyOnDrop<'a>(&'a LiveDir);

impl Drop for DestroyOnDrop<'_> {
    fn drop(&mut self) {
        let destroy = self
            .0
            .run(&["destroy", "-auto-approve", "-input=false", "-parallelism=4"]);
        // Panicking while a failed assertion unwinds would abort the report of the failure.
        if !std::thread::panicking() {
            assert!(destroy.success(), "destroy failed:\n{destroy}");
        }
    }
}

/// The `resource_changes` entry of `address`.
fn change<'p>(plan: &'p PlanSummary, address: &str) -> &'p Value {
    plan.raw["resource_changes"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["address"] == address)
        .unwrap_or_else(|| panic!("the plan does not mention {address}"))
}

#[test]
fn the_cases_cover_every_kind_of_the_table() {
    let mut kinds: Vec<&str> = CASES.iter().chain(HELD).map(|c| c.kind).collect();
    kinds.sort_unstable();
    kinds.dedup();
    assert_eq!(kinds.len(), CASES.len() + HELD.len(), "one case per kind");
    let table: Vec<&str> = IMMUTABLE.keys().map(String::as_str).collect();
    assert_eq!(
        kinds, table,
        "the kinds with immutable fields in the behaviour table"
    );
    for case in CASES.iter().chain(HELD) {
        assert!(
            IMMUTABLE[case.kind].iter().any(|p| p == case.path),
            "{}: {} is none of its immutable fields in the behaviour table: {:?}",
            case.kind,
            case.path,
            IMMUTABLE[case.kind]
        );
    }
    assert_eq!(json_path("spec.selector"), json!(["spec", 0, "selector"]));
    assert_eq!(json_path("role_ref"), json!(["role_ref"]));
}

/// Runs `steps` with the cases' names in a scratch namespace and a working folder of `estate`,
/// destroying what they created however they end.
fn with_names(estate: &str, steps: impl FnOnce(&LiveDir, &Names)) {
    let cluster = Cluster::start();
    let namespace = ScratchNamespace::create(&cluster, "immutable");
    let names = Names {
        namespace: namespace.name.clone(),
        unique: unique_name(estate),
    };
    let dir = LiveDir::new(estate, cluster.kubeconfig());
    let _destroy = DestroyOnDrop(&dir);
    steps(&dir, &names);
}

#[test]
fn changing_an_immutable_field_replaces_the_object() {
    with_names("immutable", create_change_and_replace);
}

/// The steps of [`changing_an_immutable_field_replaces_the_object`]: create every case's
/// object, change every immutable field, check the plan, apply it, check the next plan.
fn create_change_and_replace(dir: &LiveDir, names: &Names) {
    dir.write(&configuration(CASES, names, Step::Before));
    dir.apply_ok("create one object of each kind");

    dir.write(&configuration(CASES, names, Step::After));
    plans_replacements(dir, CASES);

    dir.apply_ok("replace each object");
    let (out, plan) = dir.engine().plan_json(&["-parallelism=4"]);
    let plan = plan.unwrap_or_else(|| panic!("plan failed:\n{out}"));
    assert!(
        plan.is_empty(),
        "a plan after the replacements is not empty: {:?}\n{out}",
        plan.changes
    );
}

#[test]
fn changing_an_immutable_field_of_a_held_kind_plans_a_replacement() {
    with_names("held", |dir, names| {
        dir.write(&configuration(HELD, names, Step::Before));
        dir.apply_ok("create one object of each held kind");
        dir.write(&configuration(HELD, names, Step::After));
        plans_replacements(dir, HELD);
        // Destroy what was created, not the changed configuration's objects.
        dir.write(&configuration(HELD, names, Step::Before));
    });
}

/// Plans `dir`'s configuration: each case's object must be replaced because of its path.
fn plans_replacements(dir: &LiveDir, cases: &[Case]) {
    let (out, plan) = dir.engine().plan_json(&["-parallelism=4"]);
    let plan = plan.unwrap_or_else(|| panic!("plan failed:\n{out}"));
    let mut wrong = Vec::new();
    for case in cases {
        let address = address(case);
        let change = change(&plan, &address);
        let actions = &change["change"]["actions"];
        let expected_path = json_path(case.path);
        let paths = change["change"]["replace_paths"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if *actions != json!(["delete", "create"]) && *actions != json!(["create", "delete"]) {
            wrong.push(format!(
                "{} ({}): actions {actions}, not a replace",
                address, case.kind
            ));
        } else if !paths.contains(&expected_path) {
            wrong.push(format!(
                "{} ({}): replaced because of {paths:?}, not {expected_path}",
                address, case.kind
            ));
        }
    }
    assert!(wrong.is_empty(), "{}\n{out}", wrong.join("\n"));
}
