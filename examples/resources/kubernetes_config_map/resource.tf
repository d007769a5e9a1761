resource "kubernetes_config_map" "app" {
  metadata {
    name      = "app-config"
    namespace = "shop"
  }

  data = {
    log_level = "info"
    "app.properties" = <<-EOT
      greeting=hello
    EOT
  }
}
