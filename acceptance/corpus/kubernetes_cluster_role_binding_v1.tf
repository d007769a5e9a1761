# A ClusterRoleBinding granting a ClusterRole to a ServiceAccount in the
# file's namespace, a user and a group.

resource "kubernetes_namespace_v1" "corpus" {
  metadata {
    name = "corpus-clusterrolebinding"
  }
}

resource "kubernetes_service_account_v1" "auditor" {
  metadata {
    name      = "auditor"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
  }
}

resource "kubernetes_cluster_role_v1" "auditor" {
  metadata {
    name = "corpus-auditor"
  }

  rule {
    api_groups = ["", "apps", "batch"]
    resources  = ["*"]
    verbs      = ["get", "list", "watch"]
  }
}

resource "kubernetes_cluster_role_binding_v1" "auditor" {
  metadata {
    name = "corpus-auditor"
    labels = {
      "app.kubernetes.io/part-of" = "corpus"
    }
  }

  role_ref {
    api_group = "rbac.authorization.k8s.io"
    kind      = "ClusterRole"
    name      = kubernetes_cluster_role_v1.auditor.metadata[0].name
  }

  subject {
    kind      = "ServiceAccount"
    name      = kubernetes_service_account_v1.auditor.metadata[0].name
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
  }

  subject {
    kind      = "User"
    name      = "admin@example.com"
    api_group = "rbac.authorization.k8s.io"
  }

  subject {
    kind      = "Group"
    name      = "system:serviceaccounts:corpus-clusterrolebinding"
    api_group = "rbac.authorization.k8s.io"
  }
}
