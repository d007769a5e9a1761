resource "kubernetes_ingress_v1" "min" {
  metadata {
    name = "min-ing-${var.suffix}"
  }
  spec {
    default_backend {
      service {
        name = "min-backend"
        port {
          number = 80
        }
      }
    }
  }
}
