# Labels on a ConfigMap another tool manages: only these labels are this resource's, written
# under their own field manager; the ConfigMap's other labels and fields stay as they are.
resource "kubernetes_labels" "example" {
  api_version = "v1"
  kind        = "ConfigMap"
  metadata {
    name      = "my-config"
    namespace = "default"
  }
  labels = {
    "owner" = "myteam"
  }
}
