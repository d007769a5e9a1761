//! The fields Kubernetes 1.36 serves beyond hashicorp/kubernetes 3.4.0 (`make catalog`
//! generates them from the server's OpenAPI: docs/beyond-3.4.0.md). One configuration writes
//! every one of them that a user sets; each must reach the object, read back into state, and
//! leave the next plan empty. A field the catalog gains without a value here fails the test,
//! so the list cannot outgrow its proof.

use std::collections::BTreeSet;

use acceptance::Cluster;
use acceptance::hcl::{LiveDir, ScratchNamespace, quote, unique_name};
use serde_json::Value as Json;

/// The configuration: a Deployment per pod-spec concern (no replicas: only the API's
/// validation and storage matter), and one object of every other type with new fields.
fn config(ns: &str, id: &str) -> String {
    let ns = quote(ns);
    format!(
        r#"
locals {{
  labels = {{ app = "beyond" }}
}}

resource "kubernetes_deployment_v1" "containers" {{
  metadata {{
    name      = "containers"
    namespace = {ns}
  }}
  wait_for_rollout = false
  spec {{
    replicas = 0
    selector {{ match_labels = local.labels }}
    template {{
      metadata {{ labels = local.labels }}
      spec {{
        init_container {{
          name           = "sidecar"
          image          = "busybox"
          restart_policy = "Always"
          lifecycle {{
            post_start {{
              tcp_socket {{
                port = "8080"
                host = "localhost"
              }}
            }}
            pre_stop {{
              sleep {{ seconds = 2 }}
            }}
          }}
          resize_policy {{
            resource_name  = "memory"
            restart_policy = "RestartContainer"
          }}
        }}
        container {{
          name  = "main"
          image = "busybox"
          env {{
            name = "FROM_FILE"
            value_from {{
              file_key_ref {{
                key         = "CONFIG"
                path        = "env.txt"
                volume_name = "envs"
                optional    = true
              }}
            }}
          }}
          lifecycle {{
            post_start {{
              sleep {{ seconds = 1 }}
            }}
            pre_stop {{
              tcp_socket {{
                port = "8080"
                host = "localhost"
              }}
            }}
          }}
          liveness_probe {{
            tcp_socket {{
              port = "8080"
              host = "localhost"
            }}
            termination_grace_period_seconds = 10
          }}
          readiness_probe {{
            tcp_socket {{
              port = "8080"
              host = "localhost"
            }}
          }}
          startup_probe {{
            tcp_socket {{
              port = "8080"
              host = "localhost"
            }}
            termination_grace_period_seconds = 20
          }}
          security_context {{
            proc_mount = "Default"
            app_armor_profile {{
              type              = "Localhost"
              localhost_profile = "k8s-beyond"
            }}
          }}
          volume_mount {{
            name                = "envs"
            mount_path          = "/envs"
            read_only           = true
            recursive_read_only = "IfPossible"
          }}
          resize_policy {{
            resource_name  = "cpu"
            restart_policy = "NotRequired"
          }}
        }}
        container {{
          name  = "windows"
          image = "busybox"
          security_context {{
            windows_options {{
              gmsa_credential_spec      = "{{}}"
              gmsa_credential_spec_name = "gmsa"
              host_process              = false
              run_as_user_name          = "ContainerUser"
            }}
          }}
        }}
        volume {{
          name = "envs"
          empty_dir {{}}
        }}
      }}
    }}
  }}
}}

resource "kubernetes_deployment_v1" "volumes" {{
  metadata {{
    name      = "volumes"
    namespace = {ns}
  }}
  wait_for_rollout = false
  spec {{
    replicas = 0
    selector {{ match_labels = local.labels }}
    template {{
      metadata {{ labels = local.labels }}
      spec {{
        container {{
          name  = "main"
          image = "busybox"
        }}
        volume {{
          name = "image"
          image {{
            reference   = "busybox:1.36"
            pull_policy = "IfNotPresent"
          }}
        }}
        volume {{
          name = "iscsi"
          iscsi {{
            target_portal       = "10.0.0.1:3260"
            iqn                 = "iqn.2001-04.com.example:storage"
            lun                 = 0
            portals             = ["10.0.0.2:3260"]
            chap_auth_discovery = true
            chap_auth_session   = true
            initiator_name      = "iqn.2001-04.com.example:node"
            secret_ref {{ name = "chap" }}
          }}
        }}
        volume {{
          name = "cinder"
          cinder {{
            volume_id = "vol-1"
            secret_ref {{ name = "cinder" }}
          }}
        }}
        volume {{
          name = "quobyte"
          quobyte {{
            registry = "registry:7861"
            volume   = "data"
            tenant   = "tenant-a"
          }}
        }}
        volume {{
          name = "vsphere"
          vsphere_volume {{
            volume_path         = "[datastore] volumes/one"
            storage_policy_name = "gold"
            storage_policy_id   = "policy-1"
          }}
        }}
        volume {{
          name = "scratch"
          ephemeral {{
            volume_claim_template {{
              spec {{
                access_modes                 = ["ReadWriteOnce"]
                volume_attributes_class_name = "fast"
                data_source {{
                  api_group = "snapshot.storage.k8s.io"
                  kind      = "VolumeSnapshot"
                  name      = "seed"
                }}
                resources {{
                  requests = {{ storage = "1Gi" }}
                }}
              }}
            }}
          }}
        }}
      }}
    }}
  }}
}}

resource "kubernetes_deployment_v1" "pod" {{
  metadata {{
    name      = "pod"
    namespace = {ns}
  }}
  wait_for_rollout = false
  spec {{
    replicas = 0
    selector {{ match_labels = local.labels }}
    template {{
      metadata {{ labels = local.labels }}
      spec {{
        host_users           = false
        hostname_override    = "beyond-host"
        set_hostname_as_fqdn = false
        scheduling_gate {{ name = "example.com/hold" }}
        resource_claim {{
          name                = "gpu"
          resource_claim_name = "shared-gpu"
        }}
        resources {{
          limits   = {{ cpu = "1", memory = "256Mi" }}
          requests = {{ cpu = "500m", memory = "128Mi" }}
        }}
        security_context {{
          supplemental_groups_policy = "Strict"
          app_armor_profile {{
            type              = "Localhost"
            localhost_profile = "k8s-pod"
          }}
        }}
        affinity {{
          pod_affinity {{
            required_during_scheduling_ignored_during_execution {{
              topology_key        = "kubernetes.io/hostname"
              label_selector {{ match_labels = local.labels }}
              match_label_keys    = ["pod-template-hash"]
              mismatch_label_keys = ["tenant"]
            }}
            preferred_during_scheduling_ignored_during_execution {{
              weight = 10
              pod_affinity_term {{
                topology_key        = "kubernetes.io/hostname"
                label_selector {{ match_labels = local.labels }}
                match_label_keys    = ["pod-template-hash"]
                mismatch_label_keys = ["tenant"]
              }}
            }}
          }}
          pod_anti_affinity {{
            required_during_scheduling_ignored_during_execution {{
              topology_key        = "topology.kubernetes.io/zone"
              label_selector {{ match_labels = local.labels }}
              match_label_keys    = ["pod-template-hash"]
              mismatch_label_keys = ["tenant"]
            }}
            preferred_during_scheduling_ignored_during_execution {{
              weight = 20
              pod_affinity_term {{
                topology_key        = "topology.kubernetes.io/zone"
                label_selector {{ match_labels = local.labels }}
                match_label_keys    = ["pod-template-hash"]
                mismatch_label_keys = ["tenant"]
              }}
            }}
          }}
        }}
        container {{
          name  = "main"
          image = "busybox"
          resources {{
            claim {{
              name    = "gpu"
              request = "one"
            }}
          }}
        }}
      }}
    }}
  }}
}}

resource "kubernetes_job_v1" "job" {{
  metadata {{
    name      = "job"
    namespace = {ns}
  }}
  wait_for_completion = false
  spec {{
    suspend                = true
    managed_by             = "example.com/queue"
    pod_replacement_policy = "Failed"
    completion_mode        = "Indexed"
    completions            = 3
    parallelism            = 1
    success_policy {{
      rule {{
        succeeded_indexes = "0-1"
        succeeded_count   = 1
      }}
    }}
    template {{
      metadata {{}}
      spec {{
        restart_policy = "Never"
        container {{
          name    = "main"
          image   = "busybox"
          command = ["true"]
        }}
      }}
    }}
  }}
}}

resource "kubernetes_stateful_set_v1" "set" {{
  metadata {{
    name      = "set"
    namespace = {ns}
  }}
  wait_for_rollout = false
  spec {{
    replicas     = 0
    service_name = "set"
    selector {{ match_labels = local.labels }}
    ordinals {{ start = 5 }}
    template {{
      metadata {{ labels = local.labels }}
      spec {{
        container {{
          name  = "main"
          image = "busybox"
        }}
      }}
    }}
    volume_claim_template {{
      metadata {{ name = "data" }}
      spec {{
        access_modes                 = ["ReadWriteOnce"]
        volume_attributes_class_name = "fast"
        data_source {{
          api_group = "snapshot.storage.k8s.io"
          kind      = "VolumeSnapshot"
          name      = "seed"
        }}
        resources {{
          requests = {{ storage = "1Gi" }}
        }}
      }}
    }}
  }}
}}

resource "kubernetes_persistent_volume_claim_v1" "claim" {{
  metadata {{
    name      = "claim"
    namespace = {ns}
  }}
  wait_until_bound = false
  spec {{
    access_modes                 = ["ReadWriteOnce"]
    volume_attributes_class_name = "fast"
    data_source {{
      api_group = "snapshot.storage.k8s.io"
      kind      = "VolumeSnapshot"
      name      = "seed"
    }}
    resources {{
      requests = {{ storage = "1Gi" }}
    }}
  }}
}}

resource "kubernetes_persistent_volume_v1" "iscsi" {{
  metadata {{ name = "{id}-iscsi" }}
  spec {{
    capacity     = {{ storage = "1Gi" }}
    access_modes = ["ReadWriteOnce"]
    persistent_volume_source {{
      iscsi {{
        target_portal       = "10.0.0.1:3260"
        iqn                 = "iqn.2001-04.com.example:storage"
        portals             = ["10.0.0.2:3260"]
        chap_auth_discovery = true
        chap_auth_session   = true
        initiator_name      = "iqn.2001-04.com.example:node"
        secret_ref {{
          name      = "chap"
          namespace = {ns}
        }}
      }}
    }}
  }}
}}

resource "kubernetes_persistent_volume_v1" "csi" {{
  metadata {{ name = "{id}-csi" }}
  spec {{
    capacity                     = {{ storage = "1Gi" }}
    access_modes                 = ["ReadWriteOnce"]
    volume_attributes_class_name = "fast"
    persistent_volume_source {{
      csi {{
        driver        = "csi.example.com"
        volume_handle = "one"
        node_expand_secret_ref {{
          name      = "expand"
          namespace = {ns}
        }}
      }}
    }}
  }}
}}

resource "kubernetes_persistent_volume_v1" "cinder" {{
  metadata {{ name = "{id}-cinder" }}
  spec {{
    capacity     = {{ storage = "1Gi" }}
    access_modes = ["ReadWriteOnce"]
    persistent_volume_source {{
      cinder {{
        volume_id = "vol-1"
        secret_ref {{
          name      = "cinder"
          namespace = {ns}
        }}
      }}
    }}
  }}
}}

resource "kubernetes_persistent_volume_v1" "glusterfs" {{
  metadata {{ name = "{id}-glusterfs" }}
  spec {{
    capacity     = {{ storage = "1Gi" }}
    access_modes = ["ReadWriteOnce"]
    persistent_volume_source {{
      glusterfs {{
        endpoints_name      = "gluster"
        endpoints_namespace = {ns}
        path                = "data"
      }}
    }}
  }}
}}

resource "kubernetes_persistent_volume_v1" "local" {{
  metadata {{ name = "{id}-local" }}
  spec {{
    capacity     = {{ storage = "1Gi" }}
    access_modes = ["ReadWriteOnce"]
    node_affinity {{
      required {{
        node_selector_term {{
          match_expressions {{
            key      = "kubernetes.io/hostname"
            operator = "In"
            values   = ["node-1"]
          }}
        }}
      }}
    }}
    persistent_volume_source {{
      local {{
        path    = "/mnt/disk"
        fs_type = "ext4"
      }}
    }}
  }}
}}

resource "kubernetes_persistent_volume_v1" "quobyte" {{
  metadata {{ name = "{id}-quobyte" }}
  spec {{
    capacity     = {{ storage = "1Gi" }}
    access_modes = ["ReadWriteOnce"]
    persistent_volume_source {{
      quobyte {{
        registry = "registry:7861"
        volume   = "data"
        tenant   = "tenant-a"
      }}
    }}
  }}
}}

resource "kubernetes_persistent_volume_v1" "vsphere" {{
  metadata {{ name = "{id}-vsphere" }}
  spec {{
    capacity     = {{ storage = "1Gi" }}
    access_modes = ["ReadWriteOnce"]
    persistent_volume_source {{
      vsphere_volume {{
        volume_path         = "[datastore] volumes/one"
        storage_policy_name = "gold"
        storage_policy_id   = "policy-1"
      }}
    }}
  }}
}}

resource "kubernetes_service_v1" "service" {{
  metadata {{
    name      = "service"
    namespace = {ns}
  }}
  spec {{
    selector             = local.labels
    traffic_distribution = "PreferClose"
    port {{
      port = 80
    }}
  }}
}}

resource "kubernetes_endpoints_v1" "endpoints" {{
  metadata {{
    name      = "endpoints"
    namespace = {ns}
  }}
  subset {{
    address {{
      ip = "10.0.0.10"
      target_ref {{
        name      = "ready"
        namespace = {ns}
      }}
    }}
    not_ready_address {{
      ip = "10.0.0.11"
      target_ref {{
        name      = "starting"
        namespace = {ns}
      }}
    }}
    port {{
      name         = "http"
      port         = 80
      protocol     = "TCP"
      app_protocol = "http"
    }}
  }}
}}

resource "kubernetes_endpoint_slice_v1" "slice" {{
  metadata {{
    name      = "slice"
    namespace = {ns}
  }}
  address_type = "IPv4"
  endpoint {{
    addresses = ["10.0.0.12"]
    hints {{
      for_zone {{ name = "zone-a" }}
      for_node {{ name = "node-1" }}
    }}
  }}
  port {{
    name         = "http"
    port         = "80"
    protocol     = "TCP"
    app_protocol = "http"
  }}
}}

resource "kubernetes_horizontal_pod_autoscaler_v2" "hpa" {{
  metadata {{
    name      = "hpa"
    namespace = {ns}
  }}
  spec {{
    max_replicas = 3
    scale_target_ref {{
      api_version = "apps/v1"
      kind        = "Deployment"
      name        = "pod"
    }}
    behavior {{
      scale_up {{
        select_policy                = "Max"
        stabilization_window_seconds = 60
        tolerance                    = "50m"
        policy {{
          type           = "Pods"
          value          = 1
          period_seconds = 60
        }}
      }}
      scale_down {{
        select_policy                = "Max"
        stabilization_window_seconds = 60
        tolerance                    = "100m"
        policy {{
          type           = "Pods"
          value          = 1
          period_seconds = 60
        }}
      }}
    }}
  }}
}}

resource "kubernetes_pod_disruption_budget_v1" "budget" {{
  metadata {{
    name      = "budget"
    namespace = {ns}
  }}
  spec {{
    min_available                 = "1"
    unhealthy_pod_eviction_policy = "AlwaysAllow"
    selector {{ match_labels = local.labels }}
  }}
}}

resource "kubernetes_runtime_class_v1" "runtime" {{
  metadata {{ name = "{id}-runtime" }}
  handler = "beyond"
  overhead {{
    pod_fixed = {{ cpu = "100m", memory = "64Mi" }}
  }}
  scheduling {{
    node_selector = {{ "example.com/runtime" = "beyond" }}
    toleration {{
      key                = "example.com/runtime"
      value              = "beyond"
      effect             = "NoExecute"
      toleration_seconds = 30
    }}
  }}
}}

resource "kubernetes_csi_driver_v1" "driver" {{
  metadata {{ name = "{id}.csi.example.com" }}
  spec {{
    attach_required                          = false
    fs_group_policy                          = "File"
    node_allocatable_update_period_seconds   = 60
    requires_republish                       = true
    se_linux_mount                           = true
    service_account_token_in_secrets         = true
    storage_capacity                         = true
    token_request {{
      audience           = "beyond"
      expiration_seconds = 3600
    }}
  }}
}}

resource "kubernetes_validating_webhook_configuration_v1" "validating" {{
  metadata {{ name = "{id}-validating" }}
  webhook {{
    name                      = "check.example.com"
    admission_review_versions = ["v1"]
    side_effects              = "None"
    failure_policy            = "Ignore"
    client_config {{
      url = "https://check.example.com/validate"
    }}
    object_selector {{
      match_labels = {{ "example.com/never" = "true" }}
    }}
    match_condition {{
      name       = "not-system"
      expression = "!request.userInfo.username.startsWith('system:')"
    }}
  }}
}}

resource "kubernetes_mutating_webhook_configuration_v1" "mutating" {{
  metadata {{ name = "{id}-mutating" }}
  webhook {{
    name                      = "mutate.example.com"
    admission_review_versions = ["v1"]
    side_effects              = "None"
    failure_policy            = "Ignore"
    client_config {{
      url = "https://mutate.example.com/mutate"
    }}
    object_selector {{
      match_labels = {{ "example.com/never" = "true" }}
    }}
    match_condition {{
      name       = "not-system"
      expression = "!request.userInfo.username.startsWith('system:')"
    }}
  }}
}}

data "kubernetes_persistent_volume_claim_v1" "claim" {{
  metadata {{
    name      = kubernetes_persistent_volume_claim_v1.claim.metadata[0].name
    namespace = {ns}
  }}
}}

data "kubernetes_service_v1" "service" {{
  metadata {{
    name      = kubernetes_service_v1.service.metadata[0].name
    namespace = {ns}
  }}
}}

output "claim_class" {{
  value = try(data.kubernetes_persistent_volume_claim_v1.claim.spec[0].volume_attributes_class_name, "")
}}

output "traffic" {{
  value = try(data.kubernetes_service_v1.service.spec[0].traffic_distribution, "")
}}
"#
    )
}

/// The catalog's generated fields a user sets, as `(group, path)`: a pod template's and a Job
/// spec's fields once, whichever type holds them, and an init container's as a container's
/// (one OpenAPI schema, one generated subtree).
fn generated_fields() -> BTreeSet<(String, String)> {
    let catalog = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../provider-live/catalog/kinds.tsv"
    ))
    .expect("the kind catalog");
    catalog
        .lines()
        .filter(|l| l.starts_with("field\t") && l.contains("\tBeyond hashicorp/kubernetes 3.4.0."))
        .filter_map(|l| {
            let cols: Vec<&str> = l.split('\t').collect();
            (cols[6] != "computed").then(|| canonical(cols[1], cols[2]))
        })
        .collect()
}

/// The group and path of a field of type `ty` (see [`generated_fields`]).
fn canonical(ty: &str, path: &str) -> (String, String) {
    let pod_spec = ["spec.job_template.spec.template.spec.", "spec.template.spec."];
    let (group, rest) = if let Some(rest) = pod_spec.iter().find_map(|p| path.strip_prefix(p)) {
        ("pod", rest)
    } else if let Some(rest) = path.strip_prefix("spec.job_template.spec.") {
        ("job", rest)
    } else if ty == "kubernetes_pod_v1" && path.starts_with("spec.") {
        ("pod", &path[5..])
    } else if ty == "kubernetes_job_v1" && path.starts_with("spec.") {
        ("job", &path[5..])
    } else {
        (ty, path)
    };
    let rest = rest.strip_prefix("init_").unwrap_or(rest);
    (group.to_string(), rest.to_string())
}

/// Whether `value` holds something at the Terraform `path` (blocks are lists: any element).
fn has_value(value: &Json, path: &[&str]) -> bool {
    match value {
        Json::Array(items) => items.iter().any(|i| has_value(i, path)),
        Json::Null => false,
        _ => match path.split_first() {
            None => !matches!(value, Json::String(s) if s.is_empty()),
            Some((head, rest)) => value.get(*head).is_some_and(|v| has_value(v, rest)),
        },
    }
}

#[test]
fn every_field_beyond_hashicorp_is_written_read_back_and_plans_nothing() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "beyond");
    let id = unique_name("beyond");
    let work = LiveDir::new(&id, cluster.kubeconfig());
    work.write(&config(&ns.name, &id));
    work.apply_ok("every field beyond hashicorp/kubernetes 3.4.0");

    // Read back: every generated field holds a value in some resource's state.
    let states = work.state_instances();
    let missing: Vec<String> = generated_fields()
        .into_iter()
        .filter(|(group, path)| {
            !states.values().filter(|i| i.managed).any(|instance| {
                let ty = instance.type_name.as_str();
                let attributes = &instance.stored["attributes"];
                let candidates: Vec<String> = match group.as_str() {
                    "pod" => [
                        "spec.template.spec.",
                        "spec.job_template.spec.template.spec.",
                        "spec.",
                    ]
                    .iter()
                    .flat_map(|p| [format!("{p}{path}"), format!("{p}init_{path}")])
                    .collect(),
                    "job" => vec![format!("spec.{path}"), format!("spec.job_template.spec.{path}")],
                    other if other == ty => vec![path.clone()],
                    _ => Vec::new(),
                };
                candidates.iter().any(|c| {
                    let parts: Vec<&str> = c.split('.').collect();
                    has_value(attributes, &parts)
                })
            })
        })
        .map(|(group, path)| format!("{group}: {path}"))
        .collect();
    assert!(
        missing.is_empty(),
        "generated fields with no value in state (add them to the configuration):\n  {}",
        missing.join("\n  ")
    );

    // Written: the objects hold them.
    let pod = cluster.get_json(&["deployment", "pod", "-n", &ns.name]);
    assert_eq!(pod["spec"]["template"]["spec"]["hostUsers"], false, "{pod}");
    assert_eq!(
        pod["spec"]["template"]["spec"]["schedulingGates"][0]["name"],
        "example.com/hold"
    );
    let containers = cluster.get_json(&["deployment", "containers", "-n", &ns.name]);
    let main = &containers["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(main["resizePolicy"][0]["restartPolicy"], "NotRequired", "{main}");
    assert_eq!(
        main["env"][0]["valueFrom"]["fileKeyRef"]["volumeName"], "envs",
        "{main}"
    );
    let service = cluster.get_json(&["service", "service", "-n", &ns.name]);
    assert_eq!(service["spec"]["trafficDistribution"], "PreferClose");
    let job = cluster.get_json(&["job", "job", "-n", &ns.name]);
    assert_eq!(
        job["spec"]["successPolicy"]["rules"][0]["succeededCount"], 1,
        "{job}"
    );

    // Data sources read them too. (A data source read in the apply that creates its object
    // reads its optional blocks empty: a second apply reads them.)
    work.apply_ok("the data sources again");
    assert_eq!(work.run(&["output", "-raw", "claim_class"]).stdout, "fast");
    assert_eq!(work.run(&["output", "-raw", "traffic"]).stdout, "PreferClose");

    let next = work.plan_exit();
    assert_eq!(next.code, 0, "the plan after apply is not empty:\n{next}");

    work.write("");
    work.apply_ok("destroy");
}
