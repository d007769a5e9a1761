output "gateway_host" {
  description = "The gateway this estate was wired to (network's recorded output)."
  value       = local.gateway_host
}

output "web_service" {
  description = "The web Service, as namespace/name."
  value       = "${kubernetes_service.web.metadata[0].namespace}/${kubernetes_service.web.metadata[0].name}"
}

# Recorded in tofu-records-app, for whichever estate comes next.
resource "records_outputs" "this" {
  values = {
    web_service = "${kubernetes_service.web.metadata[0].namespace}/${kubernetes_service.web.metadata[0].name}"
  }
}
