# Lists the Deployments of namespace shop labelled tier=web, at most 10, in one request.
data "kubernetes_resources" "web" {
  api_version    = "apps/v1"
  kind           = "Deployment"
  namespace      = "shop"
  label_selector = "tier=web"
  limit          = 10
}

output "deployments" {
  value = [for d in data.kubernetes_resources.web.objects : d.metadata.name]
}
