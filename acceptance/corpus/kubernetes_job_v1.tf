# An indexed batch Job with a pod failure policy, backoff and TTL settings,
# a ConfigMap-driven container and a scratch volume.

resource "kubernetes_namespace_v1" "corpus" {
  metadata {
    name = "corpus-job"
  }
}

resource "kubernetes_job_v1" "migrate" {
  metadata {
    name      = "db-migrate"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
    labels = {
      app = "db-migrate"
    }
  }

  spec {
    completions                = 4
    parallelism                = 2
    completion_mode            = "Indexed"
    backoff_limit              = 3
    active_deadline_seconds    = 1800
    ttl_seconds_after_finished = 3600

    pod_failure_policy {
      rule {
        action = "FailJob"

        on_exit_codes {
          container_name = "migrate"
          operator       = "In"
          values         = [42]
        }
      }

      rule {
        action = "Ignore"

        on_pod_condition {
          type   = "DisruptionTarget"
          status = "True"
        }
      }
    }

    template {
      metadata {
        labels = {
          app = "db-migrate"
        }
      }

      spec {
        restart_policy = "Never"

        container {
          name    = "migrate"
          image   = "alpine:3.20"
          command = ["sh", "-c", "echo migrating shard $JOB_COMPLETION_INDEX; sleep 5"]

          env {
            name = "SHARD"

            value_from {
              field_ref {
                field_path = "metadata.annotations['batch.kubernetes.io/job-completion-index']"
              }
            }
          }

          env_from {
            config_map_ref {
              name     = "migrate-settings"
              optional = true
            }
          }

          resources {
            requests = {
              cpu    = "100m"
              memory = "64Mi"
            }
            limits = {
              cpu    = "500m"
              memory = "128Mi"
            }
          }

          volume_mount {
            name       = "scratch"
            mount_path = "/scratch"
          }
        }

        volume {
          name = "scratch"

          empty_dir {
            size_limit = "1Gi"
          }
        }
      }
    }
  }
}
