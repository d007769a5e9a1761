data "kubectl_manifest" "ingress_controller" {
  api_version = "v1"
  kind        = "Service"
  name        = "ingress-nginx-controller"
  namespace   = "ingress-nginx"
  fields = {
    address = "status.loadBalancer.ingress[0].ip"
  }

  # Wait until the load balancer has an address.
  wait_for {}
}

output "ingress_address" {
  value = data.kubectl_manifest.ingress_controller.results.address
}
