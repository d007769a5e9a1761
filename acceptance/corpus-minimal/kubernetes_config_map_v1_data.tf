resource "kubernetes_config_map_v1_data" "min" {
  metadata {
    name = "min-data-${var.suffix}"
  }
  data = {
    a = "1"
  }
}
