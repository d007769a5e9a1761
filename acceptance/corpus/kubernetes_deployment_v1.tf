# A web Deployment with the pod-spec blocks people write most: affinity,
# tolerations, topology spread, init containers, probes, security contexts,
# env from every kind of source and a wide mix of volume types, uploads on a
# shared claim. One replica per node (required anti-affinity), two nodes.

resource "kubernetes_namespace_v1" "corpus" {
  metadata {
    name = "corpus-deployment"
    labels = {
      "app.kubernetes.io/part-of" = "corpus"
    }
  }
}

resource "kubernetes_config_map_v1" "web" {
  metadata {
    name      = "web-config"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
  }

  data = {
    "LOG_LEVEL"  = "info"
    "nginx.conf" = <<-EOT
      server {
        listen 8080;
        location / {
          root /usr/share/nginx/html;
        }
      }
    EOT
  }
}

resource "kubernetes_secret_v1" "web" {
  metadata {
    name      = "web-credentials"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
  }

  data = {
    username = "admin"
    password = "s3cr3t-passw0rd"
  }

  type = "Opaque"
}

resource "kubernetes_persistent_volume_claim_v1" "uploads" {
  metadata {
    name      = "web-uploads"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
  }

  spec {
    access_modes = ["ReadWriteMany"]

    resources {
      requests = {
        storage = "2Gi"
      }
    }
  }
}

resource "kubernetes_deployment_v1" "web" {
  metadata {
    name      = "web"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
    labels = {
      app  = "web"
      tier = "frontend"
    }
    annotations = {
      "corpus.example.com/owner" = "platform-team"
    }
  }

  spec {
    replicas                  = 2
    revision_history_limit    = 5
    min_ready_seconds         = 10
    progress_deadline_seconds = 600

    selector {
      match_labels = {
        app = "web"
      }
    }

    strategy {
      type = "RollingUpdate"

      rolling_update {
        max_surge       = "25%"
        max_unavailable = "1"
      }
    }

    template {
      metadata {
        labels = {
          app  = "web"
          tier = "frontend"
        }
        annotations = {
          "prometheus.io/scrape" = "true"
          "prometheus.io/port"   = "9113"
        }
      }

      spec {
        termination_grace_period_seconds = 30
        automount_service_account_token  = false

        affinity {
          node_affinity {
            required_during_scheduling_ignored_during_execution {
              node_selector_term {
                match_expressions {
                  key      = "kubernetes.io/os"
                  operator = "In"
                  values   = ["linux"]
                }
              }
            }

            preferred_during_scheduling_ignored_during_execution {
              weight = 50

              preference {
                match_expressions {
                  key      = "node.kubernetes.io/instance-type"
                  operator = "In"
                  values   = ["m5.large", "m5.xlarge"]
                }
              }
            }
          }

          pod_affinity {
            preferred_during_scheduling_ignored_during_execution {
              weight = 20

              pod_affinity_term {
                topology_key = "topology.kubernetes.io/zone"

                label_selector {
                  match_labels = {
                    app = "cache"
                  }
                }
              }
            }
          }

          pod_anti_affinity {
            required_during_scheduling_ignored_during_execution {
              topology_key = "kubernetes.io/hostname"

              label_selector {
                match_expressions {
                  key      = "app"
                  operator = "In"
                  values   = ["web"]
                }
              }
            }
          }
        }

        toleration {
          key      = "dedicated"
          operator = "Equal"
          value    = "web"
          effect   = "NoSchedule"
        }

        toleration {
          key                = "node.kubernetes.io/not-ready"
          operator           = "Exists"
          effect             = "NoExecute"
          toleration_seconds = 300
        }

        topology_spread_constraint {
          max_skew           = 1
          topology_key       = "topology.kubernetes.io/zone"
          when_unsatisfiable = "ScheduleAnyway"

          label_selector {
            match_labels = {
              app = "web"
            }
          }
        }

        security_context {
          run_as_non_root = true
          run_as_user     = 101
          run_as_group    = 101
          fs_group        = 101

          seccomp_profile {
            type = "RuntimeDefault"
          }
        }

        init_container {
          name    = "fetch-assets"
          image   = "busybox:1.36"
          command = ["sh", "-c", "echo '<h1>corpus</h1>' > /work/index.html"]

          volume_mount {
            name       = "html"
            mount_path = "/work"
          }

          resources {
            limits = {
              cpu    = "100m"
              memory = "32Mi"
            }
          }
        }

        container {
          name              = "nginx"
          image             = "nginx:1.27"
          image_pull_policy = "IfNotPresent"

          port {
            name           = "http"
            container_port = 8080
            protocol       = "TCP"
          }

          env {
            name  = "ENVIRONMENT"
            value = "production"
          }

          env {
            name = "DB_PASSWORD"

            value_from {
              secret_key_ref {
                name = kubernetes_secret_v1.web.metadata[0].name
                key  = "password"
              }
            }
          }

          env {
            name = "LOG_LEVEL"

            value_from {
              config_map_key_ref {
                name = kubernetes_config_map_v1.web.metadata[0].name
                key  = "LOG_LEVEL"
              }
            }
          }

          env {
            name = "POD_NAME"

            value_from {
              field_ref {
                field_path = "metadata.name"
              }
            }
          }

          env {
            name = "MEMORY_LIMIT"

            value_from {
              resource_field_ref {
                container_name = "nginx"
                resource       = "limits.memory"
                divisor        = "1Mi"
              }
            }
          }

          env_from {
            config_map_ref {
              name = kubernetes_config_map_v1.web.metadata[0].name
            }
            prefix = "CFG_"
          }

          env_from {
            secret_ref {
              name     = kubernetes_secret_v1.web.metadata[0].name
              optional = true
            }
          }

          resources {
            limits = {
              cpu    = "500m"
              memory = "256Mi"
            }
            requests = {
              cpu    = "250m"
              memory = "128Mi"
            }
          }

          liveness_probe {
            http_get {
              path = "/"
              port = 8080

              http_header {
                name  = "X-Probe"
                value = "liveness"
              }
            }

            initial_delay_seconds = 10
            period_seconds        = 10
            failure_threshold     = 3
          }

          readiness_probe {
            tcp_socket {
              port = "http"
            }

            period_seconds  = 5
            timeout_seconds = 2
          }

          startup_probe {
            exec {
              command = ["cat", "/usr/share/nginx/html/index.html"]
            }

            failure_threshold = 30
            period_seconds    = 2
          }

          security_context {
            allow_privilege_escalation = false
            read_only_root_filesystem  = true

            capabilities {
              drop = ["ALL"]
              add  = ["NET_BIND_SERVICE"]
            }
          }

          volume_mount {
            name       = "html"
            mount_path = "/usr/share/nginx/html"
            read_only  = true
          }

          volume_mount {
            name       = "config"
            mount_path = "/etc/nginx/conf.d"
          }

          volume_mount {
            name       = "credentials"
            mount_path = "/etc/credentials"
            read_only  = true
          }

          volume_mount {
            name       = "cache"
            mount_path = "/var/cache/nginx"
          }

          volume_mount {
            name       = "podinfo"
            mount_path = "/etc/podinfo"
          }

          volume_mount {
            name       = "bundle"
            mount_path = "/etc/bundle"
            read_only  = true
          }

          volume_mount {
            name       = "uploads"
            mount_path = "/srv/uploads"
          }

          volume_mount {
            name       = "host-logs"
            mount_path = "/var/log/host"
            read_only  = true
          }
        }

        volume {
          name = "html"

          empty_dir {
            medium = "Memory"
          }
        }

        volume {
          name = "config"

          config_map {
            name         = kubernetes_config_map_v1.web.metadata[0].name
            default_mode = "0644"

            items {
              key  = "nginx.conf"
              path = "default.conf"
            }
          }
        }

        volume {
          name = "credentials"

          secret {
            secret_name  = kubernetes_secret_v1.web.metadata[0].name
            default_mode = "0400"
          }
        }

        volume {
          name = "cache"

          empty_dir {
            size_limit = "256Mi"
          }
        }

        volume {
          name = "podinfo"

          downward_api {
            items {
              path = "labels"

              field_ref {
                field_path = "metadata.labels"
              }
            }

            items {
              path = "annotations"

              field_ref {
                field_path = "metadata.annotations"
              }
            }
          }
        }

        volume {
          name = "bundle"

          projected {
            default_mode = "0440"

            sources {
              config_map {
                name = kubernetes_config_map_v1.web.metadata[0].name

                items {
                  key  = "LOG_LEVEL"
                  path = "log-level"
                }
              }
            }

            sources {
              secret {
                name = kubernetes_secret_v1.web.metadata[0].name

                items {
                  key  = "username"
                  path = "username"
                }
              }
            }

            sources {
              downward_api {
                items {
                  path = "cpu_limit"

                  resource_field_ref {
                    container_name = "nginx"
                    resource       = "limits.cpu"
                    divisor        = "1m"
                  }
                }
              }
            }

            sources {
              service_account_token {
                audience           = "vault"
                expiration_seconds = 3600
                path               = "vault-token"
              }
            }
          }
        }

        volume {
          name = "uploads"

          persistent_volume_claim {
            claim_name = kubernetes_persistent_volume_claim_v1.uploads.metadata[0].name
          }
        }

        volume {
          name = "host-logs"

          host_path {
            path = "/var/log"
            type = "Directory"
          }
        }
      }
    }
  }
}
