# Environment variables of one container of a Deployment another tool manages: only these
# variables are this resource's.
resource "kubernetes_env" "example" {
  api_version = "apps/v1"
  kind        = "Deployment"
  container   = "nginx"
  metadata {
    name      = "my-app"
    namespace = "default"
  }

  env {
    name  = "NGINX_HOST"
    value = "example.com"
  }

  env {
    name = "POD_NAME"
    value_from {
      field_ref {
        field_path = "metadata.name"
      }
    }
  }
}
