resource "kubernetes_labels" "min" {
  api_version = "v1"
  kind        = "ConfigMap"
  metadata {
    name = "min-lab-${var.suffix}"
  }
  labels = {
    "minimal.example.com/a" = "1"
  }
}
