# Every Deployment of this estate in namespace "shop", each result ready to import as a
# kubernetes_manifest.
list "kubernetes_manifest" "deployments" {
  provider = kubernetes
  limit    = 100

  config {
    api_version    = "apps/v1"
    kind           = "Deployment"
    namespace      = "shop"
    label_selector = "app.kubernetes.io/part-of=shop"
  }
}
