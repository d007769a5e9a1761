resource "kubernetes_secret_v1" "min" {
  metadata {
    name = "min-secret-${var.suffix}"
  }
}
