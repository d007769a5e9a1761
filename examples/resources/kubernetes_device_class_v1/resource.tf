# The devices of one DRA driver, selected by a CEL expression.
resource "kubernetes_device_class_v1" "gpu" {
  metadata {
    name = "gpu.example.com"
  }
  spec {
    selector {
      cel {
        expression = "device.driver == \"gpu.example.com\""
      }
    }
  }
}
