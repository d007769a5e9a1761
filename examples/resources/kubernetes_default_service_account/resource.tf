# The default service account of a namespace: no token mounted, a registry pull secret. The
# cluster creates the account; a destroy only takes these settings back.
resource "kubernetes_namespace" "example" {
  metadata {
    name = "example"
  }
}

resource "kubernetes_default_service_account" "example" {
  metadata {
    namespace = kubernetes_namespace.example.metadata[0].name
  }
  automount_service_account_token = false
  image_pull_secret {
    name = "regcred"
  }
}
