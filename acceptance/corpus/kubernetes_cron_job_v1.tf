# A nightly CronJob with a time zone, concurrency policy, history limits and a
# job template whose pods mount a Secret and run as a non-root user.

resource "kubernetes_namespace_v1" "corpus" {
  metadata {
    name = "corpus-cronjob"
  }
}

resource "kubernetes_cron_job_v1" "backup" {
  metadata {
    name      = "nightly-backup"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
    labels = {
      app = "backup"
    }
  }

  spec {
    schedule                      = "30 2 * * *"
    timezone                      = "Etc/UTC"
    concurrency_policy            = "Forbid"
    starting_deadline_seconds     = 300
    successful_jobs_history_limit = 3
    failed_jobs_history_limit     = 1
    suspend                       = false

    job_template {
      metadata {
        labels = {
          app = "backup"
        }
      }

      spec {
        backoff_limit              = 2
        ttl_seconds_after_finished = 86400

        template {
          metadata {
            labels = {
              app = "backup"
            }
          }

          spec {
            restart_policy = "OnFailure"

            security_context {
              run_as_non_root = true
              run_as_user     = 1000
            }

            container {
              name    = "backup"
              image   = "alpine:3.20"
              command = ["sh", "-c", "date; echo backing up to $TARGET"]

              env {
                name  = "TARGET"
                value = "s3://corpus-backups/nightly"
              }

              env {
                name = "ACCESS_KEY"

                value_from {
                  secret_key_ref {
                    name     = "backup-credentials"
                    key      = "access-key"
                    optional = true
                  }
                }
              }

              resources {
                requests = {
                  cpu    = "50m"
                  memory = "32Mi"
                }
              }

              volume_mount {
                name       = "credentials"
                mount_path = "/etc/backup"
                read_only  = true
              }
            }

            volume {
              name = "credentials"

              secret {
                secret_name = "backup-credentials"
                optional    = true
              }
            }
          }
        }
      }
    }
  }
}
