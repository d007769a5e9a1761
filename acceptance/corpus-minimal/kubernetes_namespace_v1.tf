resource "kubernetes_namespace_v1" "min" {
  metadata {
    name = "min-ns-${var.suffix}"
  }
}
