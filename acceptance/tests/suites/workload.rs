//! One workload as users write it, through its life with the real engine on a cluster that runs
//! Pods: a web Deployment with its ConfigMap (its checksum in the pod template), Secret,
//! ServiceAccount, Service, HPA, PodDisruptionBudget and claim; a database StatefulSet with
//! volume claim templates; a CronJob; a migration Job run once and waited for.
//!
//! Applied; planned empty after the HPA scaled the Deployment and `kubectl rollout restart`
//! restarted it; updated with a new image and changed config (the apply ends when the new
//! ReplicaSet is available); updated with an image that cannot be pulled (a clear error at the
//! Deployment's progress deadline, the old pods still serving); fixed (the next apply
//! converges); destroyed in one go. Named `wait_…`, as the waits are its point
//! (`scripts/test.sh` counts those).

use std::time::{Duration, Instant};

use acceptance::Cluster;
use acceptance::hcl::{LiveDir, ScratchNamespace, quote, unique_name};
use serde_json::Value;

/// The workload in namespace `ns`, its web containers running `image` with `LOG_LEVEL`.
fn workload(ns: &str, image: &str, log_level: &str) -> String {
    let ns = quote(ns);
    format!(
        r#"locals {{
  ns = {ns}
}}

resource "kubernetes_config_map_v1" "app" {{
  metadata {{
    name      = "app-config"
    namespace = local.ns
  }}
  data = {{ LOG_LEVEL = "{log_level}" }}
}}

resource "kubernetes_secret_v1" "app" {{
  metadata {{
    name      = "app-secret"
    namespace = local.ns
  }}
  data = {{ DB_PASSWORD = "s3cret" }}
}}

resource "kubernetes_service_account_v1" "app" {{
  metadata {{
    name      = "app"
    namespace = local.ns
  }}
}}

resource "kubernetes_persistent_volume_claim_v1" "uploads" {{
  metadata {{
    name      = "uploads"
    namespace = local.ns
  }}
  spec {{
    access_modes = ["ReadWriteMany"]
    resources {{
      requests = {{ storage = "1Gi" }}
    }}
  }}
}}

resource "kubernetes_deployment_v1" "web" {{
  metadata {{
    name      = "web"
    namespace = local.ns
    labels    = {{ app = "web" }}
  }}
  spec {{
    progress_deadline_seconds = 30
    selector {{
      match_labels = {{ app = "web" }}
    }}
    template {{
      metadata {{
        labels      = {{ app = "web" }}
        annotations = {{ "checksum/config" = sha1(jsonencode(kubernetes_config_map_v1.app.data)) }}
      }}
      spec {{
        service_account_name = kubernetes_service_account_v1.app.metadata[0].name
        container {{
          name  = "web"
          image = "{image}"
          port {{
            container_port = 8080
          }}
          env_from {{
            config_map_ref {{
              name = kubernetes_config_map_v1.app.metadata[0].name
            }}
          }}
          env_from {{
            secret_ref {{
              name = kubernetes_secret_v1.app.metadata[0].name
            }}
          }}
          resources {{
            requests = {{ cpu = "100m", memory = "64Mi" }}
          }}
          volume_mount {{
            name       = "uploads"
            mount_path = "/srv/uploads"
          }}
        }}
        volume {{
          name = "uploads"
          persistent_volume_claim {{
            claim_name = kubernetes_persistent_volume_claim_v1.uploads.metadata[0].name
          }}
        }}
      }}
    }}
  }}
}}

resource "kubernetes_service_v1" "web" {{
  metadata {{
    name      = "web"
    namespace = local.ns
  }}
  spec {{
    selector = {{ app = "web" }}
    port {{
      port        = 80
      target_port = 8080
    }}
  }}
}}

resource "kubernetes_horizontal_pod_autoscaler_v2" "web" {{
  metadata {{
    name      = "web"
    namespace = local.ns
  }}
  spec {{
    min_replicas = 2
    max_replicas = 4
    scale_target_ref {{
      api_version = "apps/v1"
      kind        = "Deployment"
      name        = kubernetes_deployment_v1.web.metadata[0].name
    }}
    metric {{
      type = "Resource"
      resource {{
        name = "cpu"
        target {{
          type                = "Utilization"
          average_utilization = 70
        }}
      }}
    }}
  }}
}}

resource "kubernetes_pod_disruption_budget_v1" "web" {{
  metadata {{
    name      = "web"
    namespace = local.ns
  }}
  spec {{
    min_available = "1"
    selector {{
      match_labels = {{ app = "web" }}
    }}
  }}
}}

resource "kubernetes_service_v1" "db" {{
  metadata {{
    name      = "db"
    namespace = local.ns
  }}
  spec {{
    cluster_ip = "None"
    selector   = {{ app = "db" }}
    port {{
      port = 5432
    }}
  }}
}}

resource "kubernetes_stateful_set_v1" "db" {{
  metadata {{
    name      = "db"
    namespace = local.ns
  }}
  spec {{
    service_name = kubernetes_service_v1.db.metadata[0].name
    replicas     = 2
    selector {{
      match_labels = {{ app = "db" }}
    }}
    template {{
      metadata {{
        labels = {{ app = "db" }}
      }}
      spec {{
        container {{
          name  = "db"
          image = "postgres:16.4"
          port {{
            container_port = 5432
          }}
          volume_mount {{
            name       = "data"
            mount_path = "/var/lib/postgresql/data"
          }}
        }}
      }}
    }}
    volume_claim_template {{
      metadata {{
        name = "data"
      }}
      spec {{
        access_modes = ["ReadWriteOnce"]
        resources {{
          requests = {{ storage = "1Gi" }}
        }}
      }}
    }}
  }}
}}

resource "kubernetes_job_v1" "migrate" {{
  metadata {{
    name      = "migrate"
    namespace = local.ns
  }}
  spec {{
    backoff_limit = 1
    template {{
      metadata {{}}
      spec {{
        restart_policy       = "Never"
        service_account_name = kubernetes_service_account_v1.app.metadata[0].name
        container {{
          name    = "migrate"
          image   = "busybox:1.36"
          command = ["sh", "-c", "echo migrated"]
        }}
      }}
    }}
  }}
}}

resource "kubernetes_cron_job_v1" "backup" {{
  metadata {{
    name      = "backup"
    namespace = local.ns
  }}
  spec {{
    schedule = "0 3 * * *"
    job_template {{
      metadata {{}}
      spec {{
        template {{
          metadata {{}}
          spec {{
            restart_policy = "OnFailure"
            container {{
              name    = "backup"
              image   = "busybox:1.36"
              command = ["sh", "-c", "echo backup"]
            }}
          }}
        }}
      }}
    }}
  }}
}}
"#
    )
}

/// Reads the Deployment until `done` holds (30 s at most).
fn deployment_until(cluster: &Cluster, ns: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let live = cluster.get_json(&["deployment", "web", "-n", ns]);
        if done(&live) || Instant::now() > deadline {
            return live;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// The Deployment's rollout is complete: the latest generation seen, every replica of the new
/// ReplicaSet available, no old one left, and every web pod runs `image` and is ready.
fn rolled_out(cluster: &Cluster, ns: &str, image: &str) {
    let live = cluster.get_json(&["deployment", "web", "-n", ns]);
    let status = &live["status"];
    assert_eq!(
        status["observedGeneration"], live["metadata"]["generation"],
        "{status}"
    );
    let desired = &live["spec"]["replicas"];
    for field in ["replicas", "updatedReplicas", "availableReplicas"] {
        assert_eq!(&status[field], desired, "{field}: {status}");
    }
    let pods = cluster.get_json(&["pods", "-n", ns, "-l", "app=web"]);
    let pods = pods["items"].as_array().cloned().unwrap_or_default();
    assert_eq!(Some(pods.len() as i64), desired.as_i64(), "{pods:?}");
    for pod in &pods {
        let name = pod["metadata"]["name"].as_str().unwrap_or("");
        assert_eq!(pod["spec"]["containers"][0]["image"], image, "{name}");
        let ready = pod["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["type"] == "Ready" && c["status"] == "True");
        assert!(ready, "{name} is not ready: {}", pod["status"]);
    }
}

fn empty_plan(work: &LiveDir, after: &str) {
    let plan = work.plan_exit();
    assert_eq!(plan.code, 0, "the plan after {after} is not empty:\n{plan}");
}

#[test]
fn wait_a_whole_workload_applies_updates_fails_recovers_and_destroys() {
    let cluster = Cluster::start();
    let namespace = ScratchNamespace::create(&cluster, "shop");
    let ns = namespace.name.as_str();
    let estate = unique_name("shop");
    let work = LiveDir::new(&estate, cluster.kubeconfig());

    work.write(&workload(ns, "nginx:1.27", "info"));
    work.apply_ok("create");
    let db = cluster.get_json(&["statefulset", "db", "-n", ns]);
    assert_eq!(db["status"]["readyReplicas"], 2, "{}", db["status"]);
    let job = cluster.get_json(&["job", "migrate", "-n", ns]);
    assert_eq!(job["status"]["succeeded"], 1, "{}", job["status"]);
    let claims = cluster.get_json(&["pvc", "-n", ns]);
    let phases: Vec<&Value> = claims["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| &c["status"]["phase"])
        .collect();
    assert_eq!(phases.len(), 3, "uploads, data-db-0, data-db-1: {phases:?}");
    assert!(phases.iter().all(|p| *p == "Bound"), "{phases:?}");

    // The autoscaler holds the Deployment at its minimum, and kubectl restarts it: neither is
    // a change of the configuration.
    let scaled = deployment_until(&cluster, ns, |d| d["spec"]["replicas"] == 2);
    assert_eq!(
        scaled["spec"]["replicas"], 2,
        "the autoscaler did not scale the Deployment"
    );
    empty_plan(&work, "the autoscaler scaled the Deployment");
    let restart = cluster.kubectl(&["rollout", "restart", "deployment/web", "-n", ns]);
    assert!(restart.success(), "{restart}");
    empty_plan(&work, "kubectl rollout restart");

    // A new image and a changed config roll out, and the apply returns once they have.
    work.write(&workload(ns, "nginx:1.28", "debug"));
    work.apply_ok("new image and config");
    rolled_out(&cluster, ns, "nginx:1.28");
    let config = cluster.get_json(&["configmap", "app-config", "-n", ns]);
    assert_eq!(config["data"]["LOG_LEVEL"], "debug");
    empty_plan(&work, "the update");

    // An image that cannot be pulled: a clear error at the progress deadline; the old pods
    // keep serving.
    work.write(&workload(ns, "nginx:1.29-nonexistent", "debug"));
    let started = Instant::now();
    let failed = work.apply();
    let took = started.elapsed();
    assert!(
        !failed.success(),
        "an image that cannot be pulled rolled out:\n{failed}"
    );
    for part in [
        format!("Deployment \"{ns}/web\""),
        "ProgressDeadlineExceeded".to_string(),
        "ImagePullBackOff on container \"web\" of pod \"web-".to_string(),
        "nginx:1.29-nonexistent".to_string(),
    ] {
        assert!(
            failed.flat().contains(&part),
            "the error does not say {part:?}:\n{failed}"
        );
    }
    assert!(took < Duration::from_secs(120), "the failed apply took {took:?}");
    let serving = cluster.get_json(&["deployment", "web", "-n", ns]);
    assert_eq!(serving["status"]["availableReplicas"], 2, "{}", serving["status"]);

    // Fixed: the next apply converges.
    work.write(&workload(ns, "nginx:1.29", "debug"));
    work.apply_ok("the fixed image");
    rolled_out(&cluster, ns, "nginx:1.29");
    empty_plan(&work, "the fix");

    // Destroyed in one go: nothing of the estate is left.
    let destroyed = work.run(&["destroy", "-auto-approve", "-input=false", "-parallelism=8"]);
    assert!(destroyed.success(), "destroy failed:\n{destroyed}");
    let selector = format!("tofu-estate={estate}");
    let left = cluster.kubectl(&[
        "get",
        "deployment,statefulset,job,cronjob,service,pvc,configmap,secret,serviceaccount,hpa,pdb",
        "-n",
        ns,
        "-l",
        &selector,
        "-o",
        "name",
    ]);
    assert!(left.success(), "{left}");
    assert_eq!(left.stdout.trim(), "", "destroy left objects behind");
}
