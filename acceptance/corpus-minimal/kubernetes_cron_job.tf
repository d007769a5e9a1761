resource "kubernetes_cron_job" "min" {
  metadata {
    name = "min-cjl-${var.suffix}"
  }
  spec {
    schedule = "0 0 1 1 *"
    job_template {
      metadata {}
      spec {
        template {
          metadata {}
          spec {
            container {
              name  = "main"
              image = "busybox"
            }
          }
        }
      }
    }
  }
}
