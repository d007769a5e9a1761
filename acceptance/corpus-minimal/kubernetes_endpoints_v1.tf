resource "kubernetes_endpoints_v1" "min" {
  metadata {
    name = "min-ep-${var.suffix}"
  }
}
