# A key of a ConfigMap another tool manages: its other keys stay theirs.
resource "kubernetes_config_map_v1_data" "example" {
  metadata {
    name      = "my-config"
    namespace = "default"
  }
  data = {
    "owner" = "myteam"
  }
}
