# A node-level log collector DaemonSet: host_path volumes, tolerations for
# control-plane taints, node affinity, a privileged-free security context with
# added capabilities, and a rolling update strategy.

resource "kubernetes_namespace_v1" "corpus" {
  metadata {
    name = "corpus-daemonset"
  }
}

resource "kubernetes_daemon_set_v1" "log_agent" {
  metadata {
    name      = "log-agent"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
    labels = {
      "app.kubernetes.io/name" = "log-agent"
    }
  }

  spec {
    min_ready_seconds      = 5
    revision_history_limit = 3

    selector {
      match_labels = {
        "app.kubernetes.io/name" = "log-agent"
      }
    }

    strategy {
      type = "RollingUpdate"

      rolling_update {
        max_unavailable = "1"
      }
    }

    template {
      metadata {
        labels = {
          "app.kubernetes.io/name" = "log-agent"
        }
      }

      spec {
        termination_grace_period_seconds = 30

        affinity {
          node_affinity {
            required_during_scheduling_ignored_during_execution {
              node_selector_term {
                match_expressions {
                  key      = "kubernetes.io/os"
                  operator = "In"
                  values   = ["linux"]
                }

                match_expressions {
                  key      = "node.kubernetes.io/exclude-log-agent"
                  operator = "DoesNotExist"
                }
              }
            }
          }
        }

        toleration {
          key      = "node-role.kubernetes.io/control-plane"
          operator = "Exists"
          effect   = "NoSchedule"
        }

        toleration {
          operator = "Exists"
          effect   = "NoExecute"
        }

        container {
          name  = "fluent-bit"
          image = "fluent/fluent-bit:3.1.9"
          args  = ["--config=/fluent-bit/etc/fluent-bit.conf"]

          port {
            name           = "metrics"
            container_port = 2020
          }

          env {
            name = "NODE_NAME"

            value_from {
              field_ref {
                field_path = "spec.nodeName"
              }
            }
          }

          resources {
            requests = {
              cpu    = "50m"
              memory = "64Mi"
            }
            limits = {
              memory = "128Mi"
            }
          }

          liveness_probe {
            http_get {
              path = "/api/v1/health"
              port = "metrics"
            }

            initial_delay_seconds = 10
            period_seconds        = 30
          }

          security_context {
            read_only_root_filesystem = true

            capabilities {
              add  = ["DAC_READ_SEARCH"]
              drop = ["ALL"]
            }
          }

          volume_mount {
            name       = "varlog"
            mount_path = "/var/log"
            read_only  = true
          }

          volume_mount {
            name       = "containers"
            mount_path = "/var/lib/docker/containers"
            read_only  = true
          }

          volume_mount {
            name       = "state"
            mount_path = "/var/fluent-bit/state"
          }
        }

        volume {
          name = "varlog"

          host_path {
            path = "/var/log"
          }
        }

        volume {
          name = "containers"

          host_path {
            path = "/var/lib/docker/containers"
            type = "DirectoryOrCreate"
          }
        }

        volume {
          name = "state"

          host_path {
            path = "/var/fluent-bit/state"
            type = "DirectoryOrCreate"
          }
        }
      }
    }
  }
}
