resource "kubernetes_validating_webhook_configuration_v1" "min" {
  metadata {
    name = "min-vwh-${var.suffix}"
  }
  webhook {
    name                      = "min.example.com"
    admission_review_versions = ["v1"]
    side_effects              = "None"
    client_config {
      url = "https://min.example.com/"
    }
  }
}
