# The autoscaling/v2beta2-shaped HorizontalPodAutoscaler: CPU utilization and
# an external queue-length metric with a match_expressions selector, plus a
# scale-down behavior.

resource "kubernetes_namespace_v1" "corpus" {
  metadata {
    name = "corpus-hpa-v2beta2"
  }
}

resource "kubernetes_horizontal_pod_autoscaler_v2beta2" "worker" {
  metadata {
    name      = "worker"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
  }

  spec {
    min_replicas = 1
    max_replicas = 10

    scale_target_ref {
      api_version = "apps/v1"
      kind        = "Deployment"
      name        = "worker"
    }

    metric {
      type = "Resource"

      resource {
        name = "cpu"

        target {
          type                = "Utilization"
          average_utilization = 80
        }
      }
    }

    metric {
      type = "External"

      external {
        metric {
          name = "latency"

          selector {
            match_expressions {
              key      = "lb_name"
              operator = "In"
              values   = ["corpus-lb"]
            }
          }
        }

        target {
          type  = "Value"
          value = "100"
        }
      }
    }

    behavior {
      scale_down {
        stabilization_window_seconds = 300
        select_policy                = "Min"

        policy {
          period_seconds = 120
          type           = "Pods"
          value          = 1
        }

        policy {
          period_seconds = 310
          type           = "Percent"
          value          = 100
        }
      }
    }
  }
}
