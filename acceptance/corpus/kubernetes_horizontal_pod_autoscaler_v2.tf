# An autoscaling/v2 HorizontalPodAutoscaler for a Deployment with resource,
# container resource, pods, object and external metrics, and scale-up /
# scale-down behavior policies.

resource "kubernetes_namespace_v1" "corpus" {
  metadata {
    name = "corpus-hpa-v2"
  }
}

resource "kubernetes_horizontal_pod_autoscaler_v2" "web" {
  metadata {
    name      = "web"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
  }

  spec {
    min_replicas = 2
    max_replicas = 20

    scale_target_ref {
      api_version = "apps/v1"
      kind        = "Deployment"
      name        = "web"
    }

    metric {
      type = "Resource"

      resource {
        name = "cpu"

        target {
          type                = "Utilization"
          average_utilization = 70
        }
      }
    }

    metric {
      type = "Resource"

      resource {
        name = "memory"

        target {
          type          = "AverageValue"
          average_value = "400Mi"
        }
      }
    }

    metric {
      type = "ContainerResource"

      container_resource {
        name      = "cpu"
        container = "nginx"

        target {
          type                = "Utilization"
          average_utilization = 60
        }
      }
    }

    metric {
      type = "Pods"

      pods {
        metric {
          name = "http_requests_per_second"
        }

        target {
          type          = "AverageValue"
          average_value = "100"
        }
      }
    }

    metric {
      type = "Object"

      object {
        described_object {
          api_version = "networking.k8s.io/v1"
          kind        = "Ingress"
          name        = "web"
        }

        metric {
          name = "requests_per_second"
        }

        target {
          type  = "Value"
          value = "2k"
        }
      }
    }

    metric {
      type = "External"

      external {
        metric {
          name = "queue_messages_ready"

          selector {
            match_labels = {
              queue = "orders"
            }
          }
        }

        target {
          type          = "AverageValue"
          average_value = "30"
        }
      }
    }

    behavior {
      scale_up {
        stabilization_window_seconds = 0
        select_policy                = "Max"

        policy {
          type           = "Percent"
          value          = 100
          period_seconds = 15
        }

        policy {
          type           = "Pods"
          value          = 4
          period_seconds = 15
        }
      }

      scale_down {
        stabilization_window_seconds = 300
        select_policy                = "Min"

        policy {
          type           = "Percent"
          value          = 10
          period_seconds = 60
        }
      }
    }
  }
}
