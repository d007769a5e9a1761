# Encodes an object (or a tuple of them) as Kubernetes YAML, e.g. to write it to a file.
output "config_map_yaml" {
  value = provider::kubernetes::manifest_encode({
    apiVersion = "v1"
    kind       = "ConfigMap"
    metadata = {
      name      = "settings"
      namespace = "shop"
    }
    data = {
      port = "8080"
    }
  })
}
