variable "api_key" {
  type      = string
  sensitive = true
}

# Every document of every file under manifests/, rendered as a template first.
data "kubectl_path_documents" "app" {
  pattern = "${path.module}/manifests/*.yaml"
  vars = {
    namespace = "shop"
    replicas  = "2"
  }
  sensitive_vars = {
    api_key = var.api_key
  }
}

resource "kubectl_manifest" "app" {
  for_each  = data.kubectl_path_documents.app.manifests
  yaml_body = each.value
}
