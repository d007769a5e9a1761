resource "kubernetes_pod_v1" "min" {
  metadata {
    name = "min-pod-${var.suffix}"
  }
  spec {
    container {
      name  = "main"
      image = "nginx"
    }
  }
}
