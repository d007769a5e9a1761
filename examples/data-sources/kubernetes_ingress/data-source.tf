# Reads the Ingress shop/site in the networking/v1beta1 shape (`service_name`, `service_port`).
data "kubernetes_ingress" "example" {
  metadata {
    name      = "site"
    namespace = "shop"
  }
}

output "hosts" {
  value = data.kubernetes_ingress.example.spec[0].rule[*].host
}
