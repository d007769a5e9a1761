# A single Pod with a sidecar-style init container, DNS config, host aliases,
# lifecycle hooks, probes, downward API and ephemeral volumes.

resource "kubernetes_namespace_v1" "corpus" {
  metadata {
    name = "corpus-pod"
  }
}

resource "kubernetes_pod_v1" "app" {
  metadata {
    name      = "app"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
    labels = {
      app     = "app"
      version = "v1"
    }
    annotations = {
      "kubectl.kubernetes.io/default-container" = "app"
    }
  }

  spec {
    restart_policy                   = "Always"
    termination_grace_period_seconds = 45
    enable_service_links             = false
    share_process_namespace          = true
    hostname                         = "app"
    subdomain                        = "apps"

    node_selector = {
      "kubernetes.io/os" = "linux"
    }

    dns_policy = "None"

    dns_config {
      nameservers = ["10.96.0.10"]
      searches    = ["corpus-pod.svc.cluster.local", "svc.cluster.local"]

      option {
        name  = "ndots"
        value = "2"
      }

      option {
        name = "edns0"
      }
    }

    host_aliases {
      ip        = "10.10.0.5"
      hostnames = ["legacy-db.internal", "legacy-db"]
    }

    security_context {
      run_as_non_root     = true
      run_as_user         = 1000
      run_as_group        = 3000
      fs_group            = 2000
      supplemental_groups = [4000]

      seccomp_profile {
        type = "RuntimeDefault"
      }
    }

    toleration {
      key                = "node.kubernetes.io/unreachable"
      operator           = "Exists"
      effect             = "NoExecute"
      toleration_seconds = 60
    }

    init_container {
      name    = "wait-for-config"
      image   = "busybox:1.36"
      command = ["sh", "-c", "until [ -f /config/ready ]; do sleep 1; done"]

      volume_mount {
        name       = "shared"
        mount_path = "/config"
      }
    }

    init_container {
      name           = "log-shipper"
      image          = "busybox:1.36"
      restart_policy = "Always"
      command        = ["sh", "-c", "tail -F /logs/app.log"]

      volume_mount {
        name       = "logs"
        mount_path = "/logs"
      }
    }

    container {
      name  = "app"
      image = "nginx:1.27"

      port {
        name           = "http"
        container_port = 8080
      }

      env {
        name = "NODE_IP"

        value_from {
          field_ref {
            field_path = "status.hostIP"
          }
        }
      }

      env {
        name = "CPU_REQUEST"

        value_from {
          resource_field_ref {
            resource = "requests.cpu"
            divisor  = "1m"
          }
        }
      }

      resources {
        requests = {
          cpu    = "200m"
          memory = "128Mi"
        }
        limits = {
          cpu    = "1"
          memory = "256Mi"
        }
      }

      lifecycle {
        post_start {
          exec {
            command = ["sh", "-c", "echo started > /logs/app.log"]
          }
        }

        pre_stop {
          http_get {
            path = "/shutdown"
            port = "http"
          }
        }
      }

      liveness_probe {
        http_get {
          path   = "/healthz"
          port   = "http"
          scheme = "HTTP"
        }

        period_seconds    = 15
        failure_threshold = 3
      }

      readiness_probe {
        grpc {
          port    = 9090
          service = "readiness"
        }

        period_seconds = 10
      }

      startup_probe {
        tcp_socket {
          port = 8080
        }

        failure_threshold = 30
        period_seconds    = 2
      }

      security_context {
        allow_privilege_escalation = false
        privileged                 = false

        capabilities {
          drop = ["ALL"]
        }
      }

      volume_mount {
        name       = "shared"
        mount_path = "/config"
        read_only  = true
      }

      volume_mount {
        name       = "logs"
        mount_path = "/logs"
      }

      volume_mount {
        name       = "podinfo"
        mount_path = "/etc/podinfo"
      }

      volume_mount {
        name       = "scratch"
        mount_path = "/scratch"
      }
    }

    volume {
      name = "shared"

      empty_dir {}
    }

    volume {
      name = "logs"

      empty_dir {
        size_limit = "64Mi"
      }
    }

    volume {
      name = "podinfo"

      downward_api {
        default_mode = "0444"

        items {
          path = "name"

          field_ref {
            field_path = "metadata.name"
          }
        }

        items {
          path = "namespace"

          field_ref {
            field_path = "metadata.namespace"
          }
        }
      }
    }

    volume {
      name = "scratch"

      ephemeral {
        volume_claim_template {
          metadata {
            labels = {
              type = "scratch"
            }
          }

          spec {
            access_modes       = ["ReadWriteOnce"]
            storage_class_name = "standard"

            resources {
              requests = {
                storage = "1Gi"
              }
            }
          }
        }
      }
    }
  }
}
