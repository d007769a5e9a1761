resource "kubernetes_ingress_class_v1" "min" {
  metadata {
    name = "min-ic-${var.suffix}"
  }
  spec {
    # The API server requires a controller.
    controller = "min.example.com/ingress"
  }
}
