//! Waits with the real engine on a cluster that runs Pods (the test server simulates nodes as
//! `make test-real`'s cluster has them, with the same conventions for failing images).
//!
//! - Every kind of wait succeeds with hashicorp 3.4.0's defaults, and each object is as
//!   awaited when the apply returns: rollouts of a DaemonSet (typed and `kubernetes_manifest`
//!   `wait { rollout }`), a Deployment's `Available` condition and a Pod's phase through
//!   `kubernetes_manifest` `wait`, a Pod's `target_state`, a LoadBalancer Service's and an
//!   Ingress's address, a static volume and its claim, a ReplicationController's replicas, a
//!   ServiceAccount token Secret.
//! - Waits that cannot succeed end within the object's own deadline (a Deployment's progress
//!   deadline, the `timeouts` block) and say why: the object, its counts against the desired
//!   count, its pods' reasons (`ImagePullBackOff on container "web" of pod "web-…"`,
//!   `CrashLoopBackOff`, `Unschedulable: 0/2 nodes are available: …`, a failed Job's exit
//!   code); an object created but not ready is tainted.
//! - A whole workload (Deployment with its ConfigMap, Secret, ServiceAccount, Service, HPA,
//!   PodDisruptionBudget and claim; a StatefulSet with claim templates; a CronJob; a Job run
//!   once) is applied, updated (new image, changed config), planned empty after an HPA and
//!   `kubectl rollout restart` moved it, updated with an image that cannot be pulled (a clear
//!   error), fixed, and destroyed in one go.
//!
//! Every test here is named `wait_…`: `scripts/test.sh` counts them in its summary.

use std::time::{Duration, Instant};

use acceptance::hcl::{LiveDir, ScratchNamespace, quote, unique_name};
use acceptance::{Cluster, EngineOutput};

/// A workload's pod template: labels `app = <app>`, one container; `extra` goes into its spec.
fn template(app: &str, container: &str, image: &str, extra: &str) -> String {
    format!(
        r#"    template {{
      metadata {{
        labels = {{ app = "{app}" }}
      }}
      spec {{
{extra}        container {{
          name  = "{container}"
          image = "{image}"
        }}
      }}
    }}"#
    )
}

fn selector(app: &str) -> String {
    format!("    selector {{\n      match_labels = {{ app = \"{app}\" }}\n    }}\n")
}

fn metadata(name: &str, ns: &str) -> String {
    format!(
        "  metadata {{\n    name      = \"{name}\"\n    namespace = {}\n  }}\n",
        quote(ns)
    )
}

/// An apply that must fail: returns its output and how long it took.
fn failing_apply(work: &LiveDir) -> (EngineOutput, Duration) {
    let started = Instant::now();
    let out = work.apply();
    let took = started.elapsed();
    assert!(!out.success(), "the apply succeeded:\n{out}");
    (out, took)
}

/// The apply's error names every one of `parts` (whitespace folded).
fn says(out: &EngineOutput, parts: &[&str]) {
    let flat = out.flat();
    for part in parts {
        assert!(flat.contains(part), "the error does not say {part:?}:\n{out}");
    }
}

/// The resource at `address` is tainted in state: the next apply replaces it.
fn tainted(work: &LiveDir, address: &str) {
    let instance = work.state_instance(address);
    assert_eq!(
        instance["status"], "tainted",
        "{address} is not tainted: {instance}"
    );
}

#[test]
fn wait_every_kind_of_wait_succeeds_and_leaves_the_object_ready() {
    let cluster = Cluster::start();
    let namespace = ScratchNamespace::create(&cluster, "waits");
    let ns = namespace.name.as_str();
    let volume = unique_name("wait-pv");
    let work = LiveDir::new(&unique_name("est"), cluster.kubeconfig());
    let pause = "registry.k8s.io/pause:3.10";
    let linux = "        node_selector = { \"kubernetes.io/os\" = \"linux\" }\n";
    let manifest = |kind: &str, name: &str, spec: &str, wait: &str| {
        format!(
            "resource \"kubernetes_manifest\" \"{name}\" {{\n  manifest = {{\n    apiVersion = \"{}\"\n    kind       = \"{kind}\"\n    \
             metadata   = {{ name = \"{name}\", namespace = {} }}\n    spec       = {spec}\n  }}\n  wait {{\n{wait}\n  }}\n}}\n",
            if kind == "Pod" { "v1" } else { "apps/v1" },
            quote(ns)
        )
    };
    let pod_spec = format!("{{ containers = [{{ name = \"main\", image = \"{pause}\" }}] }}");
    let workload_spec = |app: &str| {
        format!(
            "{{\n      selector = {{ matchLabels = {{ app = \"{app}\" }} }}\n      template = {{\n        metadata = {{ labels = {{ app = \"{app}\" }} }}\n        \
             spec     = {{ nodeSelector = {{ \"kubernetes.io/os\" = \"linux\" }}, containers = [{{ name = \"main\", image = \"{pause}\" }}] }}\n      }}\n    }}"
        )
    };
    let config = format!(
        r#"resource "kubernetes_daemon_set_v1" "agent" {{
{meta_agent}  spec {{
{sel_agent}{tpl_agent}
  }}
}}

resource "kubernetes_pod_v1" "one" {{
{meta_one}  spec {{
    container {{
      name  = "main"
      image = "{pause}"
    }}
  }}
}}

resource "kubernetes_service_v1" "public" {{
{meta_public}  spec {{
    type     = "LoadBalancer"
    selector = {{ app = "agent" }}
    port {{
      port        = 80
      target_port = 8080
    }}
  }}
}}

resource "kubernetes_ingress_v1" "web" {{
{meta_web}  spec {{
    default_backend {{
      service {{
        name = kubernetes_service_v1.public.metadata[0].name
        port {{
          number = 80
        }}
      }}
    }}
  }}
  wait_for_load_balancer = true
}}

resource "kubernetes_persistent_volume_v1" "static" {{
  metadata {{
    name = "{volume}"
  }}
  spec {{
    capacity           = {{ storage = "1Gi" }}
    access_modes       = ["ReadWriteOnce"]
    storage_class_name = "{volume}"
    persistent_volume_source {{
      host_path {{
        path = "/data/{volume}"
      }}
    }}
  }}
}}

resource "kubernetes_persistent_volume_claim_v1" "static" {{
{meta_static}  spec {{
    access_modes       = ["ReadWriteOnce"]
    storage_class_name = "{volume}"
    volume_name        = kubernetes_persistent_volume_v1.static.metadata[0].name
    resources {{
      requests = {{ storage = "1Gi" }}
    }}
  }}
}}

resource "kubernetes_replication_controller_v1" "echo" {{
{meta_echo}  spec {{
    replicas = 2
    selector = {{ app = "echo" }}
{tpl_echo}
  }}
}}

resource "kubernetes_service_account_v1" "ci" {{
{meta_ci}}}

resource "kubernetes_secret_v1" "ci_token" {{
  metadata {{
    name        = "ci-token"
    namespace   = {ns_quoted}
    annotations = {{ "kubernetes.io/service-account.name" = kubernetes_service_account_v1.ci.metadata[0].name }}
  }}
  type = "kubernetes.io/service-account-token"
}}

{manifest_rollout}
{manifest_available}
{manifest_running}"#,
        meta_agent = metadata("agent", ns),
        sel_agent = selector("agent"),
        tpl_agent = template("agent", "agent", pause, linux),
        meta_one = metadata("one", ns),
        meta_public = metadata("public", ns),
        meta_web = metadata("web", ns),
        meta_static = metadata("static", ns),
        meta_echo = metadata("echo", ns),
        tpl_echo = template("echo", "echo", pause, ""),
        meta_ci = metadata("ci", ns),
        ns_quoted = quote(ns),
        manifest_rollout = manifest(
            "DaemonSet",
            "rolled",
            &workload_spec("rolled"),
            "    rollout = true"
        ),
        manifest_available = manifest(
            "Deployment",
            "available",
            &workload_spec("available"),
            "    condition {\n      type   = \"Available\"\n      status = \"True\"\n    }"
        ),
        manifest_running = manifest(
            "Pod",
            "running",
            &pod_spec,
            "    fields = { \"status.phase\" = \"Running\" }"
        ),
    );
    work.write(&config);
    work.apply_ok("every wait");

    // As awaited the moment the apply returned.
    for name in ["agent", "rolled"] {
        let set = cluster.get_json(&["daemonset", name, "-n", ns]);
        let status = &set["status"];
        assert!(
            status["desiredNumberScheduled"].as_i64() >= Some(1),
            "{name}: {status}"
        );
        assert_eq!(
            status["numberAvailable"], status["desiredNumberScheduled"],
            "{name}: {status}"
        );
    }
    for name in ["one", "running"] {
        let pod = cluster.get_json(&["pod", name, "-n", ns]);
        assert_eq!(pod["status"]["phase"], "Running", "{name}: {}", pod["status"]);
    }
    let available = cluster.get_json(&["deployment", "available", "-n", ns]);
    let conditions = available["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        conditions
            .iter()
            .any(|c| c["type"] == "Available" && c["status"] == "True"),
        "{conditions:?}"
    );
    for what in ["service/public", "ingress/web"] {
        let object = cluster.get_json(&[what, "-n", ns]);
        let ip = object["status"]["loadBalancer"]["ingress"][0]["ip"]
            .as_str()
            .unwrap_or("");
        assert!(!ip.is_empty(), "{what} has no address: {}", object["status"]);
    }
    let claim = cluster.get_json(&["pvc", "static", "-n", ns]);
    assert_eq!(claim["status"]["phase"], "Bound", "{}", claim["status"]);
    let controller = cluster.get_json(&["rc", "echo", "-n", ns]);
    assert_eq!(
        controller["status"]["fullyLabeledReplicas"], 2,
        "{}",
        controller["status"]
    );
    let token = cluster.get_json(&["secret", "ci-token", "-n", ns]);
    assert!(token["data"]["token"].is_string(), "no token in the Secret");
    let plan = work.plan_exit();
    assert_eq!(plan.code, 0, "the plan after the waits is not empty:\n{plan}");
    let destroyed = work.run(&["destroy", "-auto-approve", "-input=false", "-parallelism=8"]);
    assert!(destroyed.success(), "destroy failed:\n{destroyed}");
}

#[test]
fn wait_image_pull_back_off_ends_at_the_progress_deadline() {
    let cluster = Cluster::start();
    let namespace = ScratchNamespace::create(&cluster, "pull");
    let ns = namespace.name.as_str();
    let work = LiveDir::new(&unique_name("est"), cluster.kubeconfig());
    work.write(&format!(
        "resource \"kubernetes_deployment_v1\" \"web\" {{\n{}  spec {{\n    replicas                  = 1\n    \
         progress_deadline_seconds = 15\n{}{}\n  }}\n}}\n",
        metadata("web", ns),
        selector("web"),
        template("web", "web", "registry.example.com/web:nonexistent", "")
    ));
    let (out, took) = failing_apply(&work);
    says(
        &out,
        &[
            &format!("Deployment \"{ns}/web\""),
            "ProgressDeadlineExceeded: ReplicaSet \"web-",
            "has timed out progressing; desired 1",
            "desired 1, updated 1, ready 0, available 0",
            "ImagePullBackOff on container \"web\" of pod \"web-",
            "Back-off pulling image \"registry.example.com/web:nonexistent\"",
        ],
    );
    // At the Deployment's own deadline, not at the 10-minute default.
    assert!(
        took >= Duration::from_secs(15) && took < Duration::from_secs(75),
        "the apply took {took:?}"
    );
    tainted(&work, "kubernetes_deployment_v1.web");
}

#[test]
fn wait_crash_loop_back_off_ends_at_its_timeout() {
    let cluster = Cluster::start();
    let namespace = ScratchNamespace::create(&cluster, "crash");
    let ns = namespace.name.as_str();
    let work = LiveDir::new(&unique_name("est"), cluster.kubeconfig());
    work.write(&format!(
        "resource \"kubernetes_stateful_set_v1\" \"db\" {{\n{}  spec {{\n    service_name = \"db\"\n    replicas     = 1\n{}{}\n  }}\n  \
         timeouts {{\n    create = \"20s\"\n  }}\n}}\n",
        metadata("db", ns),
        selector("db"),
        template("db", "db", "registry.example.com/db:fail", "")
    ));
    let (out, took) = failing_apply(&work);
    says(
        &out,
        &[
            &format!("Timed out waiting for StatefulSet \"{ns}/db\" to finish its rollout"),
            "0 of 1 replicas ready; desired 1",
            "CrashLoopBackOff on container \"db\" of pod \"db-0\"",
            "(last exit code 1)",
        ],
    );
    // At its own timeout (the last read comes no later than it), not at the default.
    assert!(
        took >= Duration::from_secs(18) && took < Duration::from_secs(80),
        "the apply took {took:?}"
    );
    tainted(&work, "kubernetes_stateful_set_v1.db");
}

#[test]
fn wait_unschedulable_pods_say_which_nodes_do_not_fit() {
    let cluster = Cluster::start();
    let namespace = ScratchNamespace::create(&cluster, "sched");
    let ns = namespace.name.as_str();
    let work = LiveDir::new(&unique_name("est"), cluster.kubeconfig());
    work.write(&format!(
        "resource \"kubernetes_deployment_v1\" \"web\" {{\n{}  spec {{\n    replicas                  = 1\n    \
         progress_deadline_seconds = 10\n{}{}\n  }}\n}}\n",
        metadata("web", ns),
        selector("web"),
        template(
            "web",
            "web",
            "registry.k8s.io/pause:3.10",
            "        node_selector = { disktype = \"ssd\" }\n"
        )
    ));
    let (out, took) = failing_apply(&work);
    says(
        &out,
        &[
            "ProgressDeadlineExceeded",
            "Unschedulable: 0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector.",
        ],
    );
    assert!(took < Duration::from_secs(70), "the apply took {took:?}");
    tainted(&work, "kubernetes_deployment_v1.web");
}

#[test]
fn wait_failed_job_says_its_pods_exit_code() {
    let cluster = Cluster::start();
    let namespace = ScratchNamespace::create(&cluster, "job");
    let ns = namespace.name.as_str();
    let work = LiveDir::new(&unique_name("est"), cluster.kubeconfig());
    work.write(&format!(
        r#"resource "kubernetes_job_v1" "once" {{
{}  spec {{
    backoff_limit = 0
    template {{
      metadata {{
        annotations = {{ "realk8s.local/exit-code" = "3" }}
      }}
      spec {{
        restart_policy = "Never"
        container {{
          name    = "main"
          image   = "busybox:1.36"
          command = ["sh", "-c", "exit 3"]
        }}
      }}
    }}
  }}
}}
"#,
        metadata("once", ns)
    ));
    let (out, took) = failing_apply(&work);
    says(
        &out,
        &[
            &format!("Job \"{ns}/once\""),
            "BackoffLimitExceeded: Job has reached the specified backoff limit",
            "succeeded 0 of 1, failed 1",
            "Error (exit code 3) on container \"main\" of pod \"once-",
        ],
    );
    assert!(took < Duration::from_secs(60), "the apply took {took:?}");
    tainted(&work, "kubernetes_job_v1.once");
}

/// A Pod's destroy returns once the Pod is gone, as hashicorp's delete waits for it
/// (`resource_kubernetes_pod_v1.go:242`): its containers stop within their grace period first,
/// and a check right after the destroy finds nothing.
#[test]
fn wait_a_pods_destroy_returns_once_it_is_gone() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "pod-gone");
    let work = LiveDir::new(&unique_name("pod-gone"), cluster.kubeconfig());
    work.write(&format!(
        r#"
resource "kubernetes_pod_v1" "slow" {{
{}  spec {{
    termination_grace_period_seconds = 5
    container {{
      name    = "work"
      image   = "busybox"
      command = ["sleep", "600"]
    }}
  }}
}}
"#,
        metadata("slow", &ns.name)
    ));
    work.apply_ok("the Pod");
    work.write("");
    work.apply_ok("destroy");
    let left = cluster.kubectl(&[
        "get",
        "pod",
        "slow",
        "-n",
        &ns.name,
        "--ignore-not-found",
        "-o",
        "name",
    ]);
    assert!(left.success(), "{left}");
    assert_eq!(
        left.stdout.trim(),
        "",
        "the Pod is still there after its destroy:\n{left}"
    );
}
