# Reads the Ingress shop/site.
data "kubernetes_ingress_v1" "example" {
  metadata {
    name      = "site"
    namespace = "shop"
  }
}

output "hosts" {
  value = data.kubernetes_ingress_v1.example.spec[0].rule[*].host
}
