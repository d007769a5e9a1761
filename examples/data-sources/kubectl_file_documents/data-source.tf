data "kubectl_file_documents" "app" {
  content = <<-YAML
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: settings
      namespace: shop
    data:
      mode: fast
    ---
    apiVersion: v1
    kind: ServiceAccount
    metadata:
      name: app
      namespace: shop
  YAML
}

resource "kubectl_manifest" "app" {
  for_each  = data.kubectl_file_documents.app.manifests
  yaml_body = each.value
}
