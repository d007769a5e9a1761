resource "kubernetes_role_binding_v1" "min" {
  metadata {
    name = "min-rb-${var.suffix}"
  }
  role_ref {
    api_group = "rbac.authorization.k8s.io"
    kind      = "Role"
    name      = "min-role-${var.suffix}"
  }
  subject {
    kind = "ServiceAccount"
    name = "min-sa-${var.suffix}"
  }
}
