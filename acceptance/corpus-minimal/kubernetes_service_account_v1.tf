resource "kubernetes_service_account_v1" "min" {
  metadata {
    name = "min-sa-${var.suffix}"
  }
}
