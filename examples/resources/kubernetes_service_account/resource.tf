resource "kubernetes_service_account" "app" {
  metadata {
    name      = "app"
    namespace = "shop"
  }

  automount_service_account_token = false

  image_pull_secret {
    name = "registry-credentials"
  }
}
