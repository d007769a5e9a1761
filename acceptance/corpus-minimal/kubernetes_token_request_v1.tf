# A token is requested for an existing service account: the file makes its own.
resource "kubernetes_service_account_v1" "for_token" {
  metadata {
    name = "min-tr-${var.suffix}"
  }
}

resource "kubernetes_token_request_v1" "min" {
  metadata {
    name = kubernetes_service_account_v1.for_token.metadata[0].name
  }
}
