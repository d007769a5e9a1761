locals {
  gateway_host = "${kubernetes_service.gateway.metadata[0].name}.${kubernetes_namespace.platform.metadata[0].name}.svc.${var.cluster_domain}"
}

output "gateway_host" {
  description = "In-cluster DNS name of the gateway Service."
  value       = local.gateway_host
}

output "namespace" {
  description = "The platform namespace."
  value       = kubernetes_namespace.platform.metadata[0].name
}

# The same values, recorded in the cluster (namespace tofu-records-network) for other
# estates to read with `data "terraform_estate_outputs"`, without access to this state.
resource "records_outputs" "this" {
  values = {
    gateway_host = local.gateway_host
    namespace    = kubernetes_namespace.platform.metadata[0].name
  }
}
