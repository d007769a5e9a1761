# Reads the EndpointSlice shop/web-abcde.
data "kubernetes_endpoint_slice_v1" "example" {
  metadata {
    name      = "web-abcde"
    namespace = "shop"
  }
}

output "addresses" {
  value = flatten(data.kubernetes_endpoint_slice_v1.example.endpoint[*].addresses)
}
