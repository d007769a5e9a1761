# Reads the Endpoints shop/web.
data "kubernetes_endpoints_v1" "example" {
  metadata {
    name      = "web"
    namespace = "shop"
  }
}

output "addresses" {
  value = flatten([for s in data.kubernetes_endpoints_v1.example.subset : [for a in s.address : a.ip]])
}
