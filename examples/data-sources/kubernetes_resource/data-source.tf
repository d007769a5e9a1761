# Reads one object of any kind, here a ConfigMap, as a dynamic value.
data "kubernetes_resource" "example" {
  api_version = "v1"
  kind        = "ConfigMap"

  metadata {
    name      = "app-config"
    namespace = "shop"
  }
}

output "color" {
  value = data.kubernetes_resource.example.object.data.color
}
