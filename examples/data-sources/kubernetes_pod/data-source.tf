# Reads the Pod shop/web-0: its spec as the server has it, and its phase in `status`.
data "kubernetes_pod" "example" {
  metadata {
    name      = "web-0"
    namespace = "shop"
  }
}

output "phase" {
  value = data.kubernetes_pod.example.status
}
