resource "kubernetes_horizontal_pod_autoscaler_v1" "min" {
  metadata {
    name = "min-hpa-v1-${var.suffix}"
  }
  spec {
    max_replicas = 2
    scale_target_ref {
      # kube-apiserver refuses a target without its API group.
      api_version = "apps/v1"
      kind        = "Deployment"
      name        = "min-hpa-target"
    }
  }
}
