resource "kubernetes_cron_job_v1" "min" {
  metadata {
    name = "min-cj-${var.suffix}"
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
