resource "kubernetes_replication_controller_v1" "min" {
  metadata {
    name = "min-rc-${var.suffix}"
  }
  spec {
    selector = {
      app = "min-rc-${var.suffix}"
    }
    template {
      metadata {
        labels = {
          app = "min-rc-${var.suffix}"
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
