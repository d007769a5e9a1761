resource "kubernetes_priority_class_v1" "min" {
  metadata {
    name = "min-pc-${var.suffix}"
  }
  value = 100
}
