resource "kubernetes_runtime_class_v1" "min" {
  metadata {
    name = "min-rtc-${var.suffix}"
  }
  handler = "min"
}
