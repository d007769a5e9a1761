# An autoscaling/v1 HorizontalPodAutoscaler scaling a Deployment on CPU
# utilization.

resource "kubernetes_namespace_v1" "corpus" {
  metadata {
    name = "corpus-hpa-v1"
  }
}

resource "kubernetes_horizontal_pod_autoscaler_v1" "api" {
  metadata {
    name      = "api"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
    labels = {
      app = "api"
    }
  }

  spec {
    min_replicas                      = 2
    max_replicas                      = 10
    target_cpu_utilization_percentage = 65

    scale_target_ref {
      api_version = "apps/v1"
      kind        = "Deployment"
      name        = "api"
    }
  }
}
