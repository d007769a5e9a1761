# A namespaced Role granting read access to pods and logs, write access to
# one named ConfigMap, and deployment scaling.

resource "kubernetes_namespace_v1" "corpus" {
  metadata {
    name = "corpus-role"
  }
}

resource "kubernetes_role_v1" "deployer" {
  metadata {
    name      = "deployer"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
    labels = {
      "rbac.corpus.example.com/role" = "deployer"
    }
  }

  rule {
    api_groups = [""]
    resources  = ["pods", "pods/log"]
    verbs      = ["get", "list", "watch"]
  }

  rule {
    api_groups     = [""]
    resources      = ["configmaps"]
    resource_names = ["app-config", "feature-flags"]
    verbs          = ["get", "update", "patch"]
  }

  rule {
    api_groups = ["apps"]
    resources  = ["deployments", "deployments/scale"]
    verbs      = ["get", "list", "patch", "update"]
  }
}
