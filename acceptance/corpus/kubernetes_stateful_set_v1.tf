# A three-replica database StatefulSet behind a headless Service, with an init
# container, per-replica volume claim templates, probes, pod anti-affinity and
# a PVC retention policy.

resource "kubernetes_namespace_v1" "corpus" {
  metadata {
    name = "corpus-statefulset"
  }
}

resource "kubernetes_service_v1" "db_headless" {
  metadata {
    name      = "db"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
    labels = {
      app = "db"
    }
  }

  spec {
    cluster_ip                  = "None"
    publish_not_ready_addresses = true

    selector = {
      app = "db"
    }

    port {
      name        = "postgres"
      port        = 5432
      target_port = "postgres"
    }
  }
}

resource "kubernetes_stateful_set_v1" "db" {
  metadata {
    name      = "db"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
    labels = {
      app                           = "db"
      "app.kubernetes.io/component" = "database"
    }
  }

  spec {
    service_name           = kubernetes_service_v1.db_headless.metadata[0].name
    replicas               = 3
    pod_management_policy  = "Parallel"
    revision_history_limit = 5

    selector {
      match_labels = {
        app = "db"
      }
    }

    update_strategy {
      type = "RollingUpdate"

      rolling_update {
        partition = 0
      }
    }

    persistent_volume_claim_retention_policy {
      when_deleted = "Retain"
      when_scaled  = "Delete"
    }

    template {
      metadata {
        labels = {
          app = "db"
        }
      }

      spec {
        termination_grace_period_seconds = 60

        affinity {
          pod_anti_affinity {
            preferred_during_scheduling_ignored_during_execution {
              weight = 100

              pod_affinity_term {
                topology_key = "kubernetes.io/hostname"

                label_selector {
                  match_expressions {
                    key      = "app"
                    operator = "In"
                    values   = ["db"]
                  }
                }
              }
            }
          }
        }

        security_context {
          fs_group               = 999
          fs_group_change_policy = "OnRootMismatch"
        }

        init_container {
          name              = "init-permissions"
          image             = "busybox:1.36"
          image_pull_policy = "IfNotPresent"
          command           = ["sh", "-c", "chown -R 999:999 /var/lib/postgresql/data"]

          security_context {
            run_as_user = 0
          }

          volume_mount {
            name       = "data"
            mount_path = "/var/lib/postgresql/data"
          }
        }

        container {
          name  = "postgres"
          image = "postgres:16.4"

          port {
            name           = "postgres"
            container_port = 5432
          }

          env {
            name  = "PGDATA"
            value = "/var/lib/postgresql/data/pgdata"
          }

          env {
            name = "POSTGRES_PASSWORD"

            value_from {
              secret_key_ref {
                name     = "db-credentials"
                key      = "password"
                optional = true
              }
            }
          }

          resources {
            requests = {
              cpu    = "250m"
              memory = "512Mi"
            }
            limits = {
              memory = "1Gi"
            }
          }

          liveness_probe {
            exec {
              command = ["pg_isready", "-U", "postgres"]
            }

            initial_delay_seconds = 30
            period_seconds        = 10
            timeout_seconds       = 5
          }

          readiness_probe {
            tcp_socket {
              port = 5432
            }

            initial_delay_seconds = 5
            period_seconds        = 5
          }

          volume_mount {
            name       = "data"
            mount_path = "/var/lib/postgresql/data"
          }

          volume_mount {
            name       = "run"
            mount_path = "/var/run/postgresql"
          }
        }

        volume {
          name = "run"

          empty_dir {}
        }
      }
    }

    volume_claim_template {
      metadata {
        name = "data"
        labels = {
          app = "db"
        }
      }

      spec {
        access_modes       = ["ReadWriteOnce"]
        storage_class_name = "standard"

        resources {
          requests = {
            storage = "10Gi"
          }
        }
      }
    }
  }
}
