# ResourceQuotas: compute and object-count limits for a namespace, a quota
# restricted by scopes, and one using a priority-class scope selector.

resource "kubernetes_namespace_v1" "corpus" {
  metadata {
    name = "corpus-resourcequota"
  }
}

resource "kubernetes_resource_quota_v1" "compute" {
  metadata {
    name      = "compute"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
  }

  spec {
    hard = {
      "requests.cpu"           = "4"
      "requests.memory"        = "8Gi"
      "limits.cpu"             = "8"
      "limits.memory"          = "16Gi"
      pods                     = "20"
      services                 = "10"
      "services.loadbalancers" = "0"
      "count/deployments.apps" = "10"
      persistentvolumeclaims   = "5"
      "requests.storage"       = "100Gi"
    }
  }
}

resource "kubernetes_resource_quota_v1" "best_effort" {
  metadata {
    name      = "best-effort"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
  }

  spec {
    hard = {
      pods = "5"
    }

    scopes = ["BestEffort", "NotTerminating"]
  }
}

resource "kubernetes_resource_quota_v1" "high_priority" {
  metadata {
    name      = "high-priority"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
  }

  spec {
    hard = {
      pods            = "10"
      "requests.cpu"  = "2"
      "limits.memory" = "4Gi"
    }

    scope_selector {
      match_expression {
        scope_name = "PriorityClass"
        operator   = "In"
        values     = ["high", "critical"]
      }
    }
  }
}
