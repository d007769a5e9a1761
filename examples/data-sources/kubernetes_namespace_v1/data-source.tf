# Reads the Namespace shop.
data "kubernetes_namespace_v1" "example" {
  metadata {
    name = "shop"
  }
}

output "uid" {
  value = data.kubernetes_namespace_v1.example.metadata[0].uid
}
