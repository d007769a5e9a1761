# A LimitRange with container defaults and bounds, a pod-level maximum, and
# PVC size limits.

resource "kubernetes_namespace_v1" "corpus" {
  metadata {
    name = "corpus-limitrange"
  }
}

resource "kubernetes_limit_range_v1" "defaults" {
  metadata {
    name      = "defaults"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
  }

  spec {
    limit {
      type = "Container"

      default = {
        cpu    = "500m"
        memory = "256Mi"
      }

      default_request = {
        cpu    = "100m"
        memory = "128Mi"
      }

      max = {
        cpu    = "2"
        memory = "2Gi"
      }

      min = {
        cpu    = "10m"
        memory = "16Mi"
      }

      max_limit_request_ratio = {
        cpu = "10"
      }
    }

    limit {
      type = "Pod"

      max = {
        cpu    = "4"
        memory = "4Gi"
      }
    }

    limit {
      type = "PersistentVolumeClaim"

      min = {
        storage = "1Gi"
      }

      max = {
        storage = "50Gi"
      }
    }
  }
}
