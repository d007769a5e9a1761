# The unversioned kubernetes_cron_job (its batch/v1beta1 shape, no time zone
# attribute): a cleanup job every fifteen minutes.

resource "kubernetes_namespace_v1" "corpus" {
  metadata {
    name = "corpus-cronjob-legacy"
  }
}

resource "kubernetes_cron_job" "cleanup" {
  metadata {
    name      = "cleanup"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
  }

  spec {
    schedule                      = "*/15 * * * *"
    concurrency_policy            = "Replace"
    failed_jobs_history_limit     = 5
    successful_jobs_history_limit = 10
    starting_deadline_seconds     = 10

    job_template {
      metadata {}

      spec {
        backoff_limit              = 2
        ttl_seconds_after_finished = 10

        template {
          metadata {}

          spec {
            restart_policy = "Never"

            container {
              name    = "cleanup"
              image   = "busybox:1.36"
              command = ["/bin/sh", "-c", "find /tmp -mmin +60 -delete; date"]

              resources {
                limits = {
                  cpu    = "100m"
                  memory = "32Mi"
                }
              }
            }
          }
        }
      }
    }
  }
}
