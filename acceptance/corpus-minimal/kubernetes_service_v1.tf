resource "kubernetes_service_v1" "min" {
  metadata {
    name = "min-svc-${var.suffix}"
  }
  spec {
    port {
      port = 80
    }
  }
}
