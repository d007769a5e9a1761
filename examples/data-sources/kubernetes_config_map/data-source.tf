# Reads the ConfigMap shop/app-config.
data "kubernetes_config_map" "example" {
  metadata {
    name      = "app-config"
    namespace = "shop"
  }
}

output "color" {
  value = data.kubernetes_config_map.example.data.color
}
