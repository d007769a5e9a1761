variable "db_password" {
  type      = string
  sensitive = true
}

resource "kubernetes_secret" "db" {
  metadata {
    name      = "db-credentials"
    namespace = "shop"
  }

  type = "Opaque"
  data = {
    username = "shop"
    password = var.db_password
  }
}
