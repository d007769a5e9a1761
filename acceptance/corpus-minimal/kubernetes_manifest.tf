# A manifest is the object as written: hashicorp's kubernetes_manifest sends a namespaced
# object's namespace as the manifest gives it, so the minimal one names it.
resource "kubernetes_manifest" "min" {
  manifest = {
    apiVersion = "v1"
    kind       = "ConfigMap"
    metadata = {
      name      = "min-man-${var.suffix}"
      namespace = "default"
    }
  }
}
