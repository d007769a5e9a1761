resource "kubernetes_env" "min" {
  api_version = "apps/v1"
  kind        = "Deployment"
  container   = "main"
  metadata {
    name = "min-env-${var.suffix}"
  }
  env {
    name  = "MINIMAL"
    value = "1"
  }
}
