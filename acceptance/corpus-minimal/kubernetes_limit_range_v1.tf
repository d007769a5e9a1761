resource "kubernetes_limit_range_v1" "min" {
  metadata {
    name = "min-lr-${var.suffix}"
  }
}
