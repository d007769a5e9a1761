# Reads the Service shop/web.
data "kubernetes_service" "example" {
  metadata {
    name      = "web"
    namespace = "shop"
  }
}

output "cluster_ip" {
  value = data.kubernetes_service.example.spec[0].cluster_ip
}
