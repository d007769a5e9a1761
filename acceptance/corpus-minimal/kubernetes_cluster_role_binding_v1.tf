resource "kubernetes_cluster_role_binding_v1" "min" {
  metadata {
    name = "min-crb-${var.suffix}"
  }
  role_ref {
    api_group = "rbac.authorization.k8s.io"
    kind      = "ClusterRole"
    name      = "view"
  }
  subject {
    kind = "ServiceAccount"
    name = "min-sa-${var.suffix}"
  }
}
