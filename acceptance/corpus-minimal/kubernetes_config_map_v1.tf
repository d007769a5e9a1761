resource "kubernetes_config_map_v1" "min" {
  metadata {
    name = "min-cm-${var.suffix}"
  }
}
