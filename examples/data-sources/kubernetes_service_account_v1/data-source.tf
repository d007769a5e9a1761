# Reads the ServiceAccount shop/deployer.
data "kubernetes_service_account_v1" "example" {
  metadata {
    name      = "deployer"
    namespace = "shop"
  }
}

output "pull_secrets" {
  value = data.kubernetes_service_account_v1.example.image_pull_secret[*].name
}
