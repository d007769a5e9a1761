# Reads the Secret shop/db: `data` holds the decoded values (sensitive); the keys named in
# `binary_data` come base64-encoded there instead.
data "kubernetes_secret_v1" "example" {
  metadata {
    name      = "db"
    namespace = "shop"
  }
  binary_data = {
    keystore = ""
  }
}

output "password" {
  value     = data.kubernetes_secret_v1.example.data.password
  sensitive = true
}
