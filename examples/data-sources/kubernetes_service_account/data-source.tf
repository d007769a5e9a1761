# Reads the ServiceAccount shop/deployer.
data "kubernetes_service_account" "example" {
  metadata {
    name      = "deployer"
    namespace = "shop"
  }
}

output "pull_secrets" {
  value = data.kubernetes_service_account.example.image_pull_secret[*].name
}
