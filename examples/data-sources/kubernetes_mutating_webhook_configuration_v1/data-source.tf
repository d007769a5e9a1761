# Reads the MutatingWebhookConfiguration sidecar-injector.
data "kubernetes_mutating_webhook_configuration_v1" "example" {
  metadata {
    name = "sidecar-injector"
  }
}

output "webhooks" {
  value = data.kubernetes_mutating_webhook_configuration_v1.example.webhook[*].name
}
