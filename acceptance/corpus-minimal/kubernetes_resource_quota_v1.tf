resource "kubernetes_resource_quota_v1" "min" {
  metadata {
    name = "min-rq-${var.suffix}"
  }
}
