# An annotation on a Deployment another tool manages, and one on its pod template.
resource "kubernetes_annotations" "example" {
  api_version = "apps/v1"
  kind        = "Deployment"
  metadata {
    name      = "my-app"
    namespace = "default"
  }
  annotations = {
    "owner" = "myteam"
  }
  template_annotations = {
    "example.com/restarted-for" = "config-v2"
  }
}
