resource "kubernetes_role_v1" "min" {
  metadata {
    name = "min-role-${var.suffix}"
  }
  rule {
    api_groups = [""]
    resources  = ["pods"]
    verbs      = ["get"]
  }
}
