# The unversioned kubernetes_horizontal_pod_autoscaler with metric blocks
# (v2beta2 shape): pods and resource metrics for a StatefulSet.

resource "kubernetes_namespace_v1" "corpus" {
  metadata {
    name = "corpus-hpa"
  }
}

resource "kubernetes_horizontal_pod_autoscaler" "consumer" {
  metadata {
    name      = "consumer"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
  }

  spec {
    min_replicas = 2
    max_replicas = 8

    scale_target_ref {
      api_version = "apps/v1"
      kind        = "StatefulSet"
      name        = "consumer"
    }

    metric {
      type = "Pods"

      pods {
        metric {
          name = "messages_in_flight"
        }

        target {
          type          = "AverageValue"
          average_value = "50"
        }
      }
    }

    metric {
      type = "Resource"

      resource {
        name = "memory"

        target {
          type                = "Utilization"
          average_utilization = 75
        }
      }
    }
  }
}
