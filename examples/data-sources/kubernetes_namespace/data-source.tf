# Reads the Namespace shop.
data "kubernetes_namespace" "example" {
  metadata {
    name = "shop"
  }
}

output "uid" {
  value = data.kubernetes_namespace.example.metadata[0].uid
}
