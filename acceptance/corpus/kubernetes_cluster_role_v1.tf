# Cluster-wide roles: a read-only role with resource names and non-resource
# URLs, and an aggregated role whose rules come from labelled ClusterRoles.

resource "kubernetes_cluster_role_v1" "viewer" {
  metadata {
    name = "corpus-viewer"
    labels = {
      "rbac.corpus.example.com/aggregate-to-monitoring" = "true"
    }
  }

  rule {
    api_groups = [""]
    resources  = ["namespaces", "nodes", "pods", "services"]
    verbs      = ["get", "list", "watch"]
  }

  rule {
    api_groups     = [""]
    resources      = ["configmaps"]
    resource_names = ["cluster-info"]
    verbs          = ["get"]
  }

  rule {
    non_resource_urls = ["/healthz", "/metrics", "/version"]
    verbs             = ["get"]
  }
}

resource "kubernetes_cluster_role_v1" "monitoring" {
  metadata {
    name = "corpus-monitoring"
  }

  aggregation_rule {
    cluster_role_selectors {
      match_labels = {
        "rbac.corpus.example.com/aggregate-to-monitoring" = "true"
      }
    }

    cluster_role_selectors {
      match_expressions {
        key      = "rbac.corpus.example.com/aggregate-to-view"
        operator = "Exists"
      }
    }
  }
}
