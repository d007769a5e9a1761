resource "kubernetes_annotations" "min" {
  api_version = "v1"
  kind        = "ConfigMap"
  metadata {
    name = "min-ann-${var.suffix}"
  }
  annotations = {
    "minimal.example.com/a" = "1"
  }
}
