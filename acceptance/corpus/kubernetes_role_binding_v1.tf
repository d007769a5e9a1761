# A RoleBinding that binds a namespaced Role to a ServiceAccount, a user and a
# group.

resource "kubernetes_namespace_v1" "corpus" {
  metadata {
    name = "corpus-rolebinding"
  }
}

resource "kubernetes_service_account_v1" "ci" {
  metadata {
    name      = "ci"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
  }
}

resource "kubernetes_role_v1" "reader" {
  metadata {
    name      = "reader"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
  }

  rule {
    api_groups = [""]
    resources  = ["pods", "services", "configmaps"]
    verbs      = ["get", "list", "watch"]
  }
}

resource "kubernetes_role_binding_v1" "reader" {
  metadata {
    name      = "reader"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
  }

  role_ref {
    api_group = "rbac.authorization.k8s.io"
    kind      = "Role"
    name      = kubernetes_role_v1.reader.metadata[0].name
  }

  subject {
    kind      = "ServiceAccount"
    name      = kubernetes_service_account_v1.ci.metadata[0].name
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
  }

  subject {
    kind      = "User"
    name      = "jane@example.com"
    api_group = "rbac.authorization.k8s.io"
  }

  subject {
    kind      = "Group"
    name      = "developers"
    api_group = "rbac.authorization.k8s.io"
  }
}
