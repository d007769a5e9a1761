# PodDisruptionBudgets: one keeping a minimum number of pods with a
# match_labels selector, one capping unavailability by percentage with
# match_expressions.

resource "kubernetes_namespace_v1" "corpus" {
  metadata {
    name = "corpus-pdb"
  }
}

resource "kubernetes_pod_disruption_budget_v1" "zookeeper" {
  metadata {
    name      = "zookeeper"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
  }

  spec {
    min_available = 2

    selector {
      match_labels = {
        app = "zookeeper"
      }
    }
  }
}

resource "kubernetes_pod_disruption_budget_v1" "web" {
  metadata {
    name      = "web"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
  }

  spec {
    max_unavailable = "25%"

    selector {
      match_expressions {
        key      = "app"
        operator = "In"
        values   = ["web", "web-canary"]
      }
    }
  }
}
