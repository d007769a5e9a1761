# Reads the ConfigMap shop/app-config.
data "kubernetes_config_map_v1" "example" {
  metadata {
    name      = "app-config"
    namespace = "shop"
  }
}

output "color" {
  value = data.kubernetes_config_map_v1.example.data.color
}
