resource "kubernetes_deployment_v1" "min" {
  metadata {
    name = "min-dep-${var.suffix}"
  }
  spec {
    template {
      metadata {
        labels = {
          app = "min-dep-${var.suffix}"
        }
      }
      spec {
        container {
          name  = "main"
          image = "nginx"
        }
      }
    }
  }
}
