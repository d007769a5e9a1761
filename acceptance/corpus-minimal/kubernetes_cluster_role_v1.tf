resource "kubernetes_cluster_role_v1" "min" {
  metadata {
    name = "min-cr-${var.suffix}"
  }
}
