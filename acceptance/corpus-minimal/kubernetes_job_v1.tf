resource "kubernetes_job_v1" "min" {
  metadata {
    name = "min-job-${var.suffix}"
  }
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
