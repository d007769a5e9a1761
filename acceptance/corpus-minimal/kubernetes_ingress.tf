resource "kubernetes_ingress" "min" {
  metadata {
    name = "min-ingl-${var.suffix}"
  }
  spec {
    backend {
      service_name = "min-backend"
      service_port = "80"
    }
  }
}
