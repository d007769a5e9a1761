resource "kubernetes_daemonset" "min" {
  metadata {
    name = "min-ds-${var.suffix}"
  }
  spec {
    template {
      metadata {
        labels = {
          app = "min-ds-${var.suffix}"
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
