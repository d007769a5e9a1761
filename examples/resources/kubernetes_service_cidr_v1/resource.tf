# One more range of Service cluster IPs, added to the cluster's own.
resource "kubernetes_service_cidr_v1" "extra" {
  metadata {
    name = "extra"
  }
  spec {
    cidrs = ["10.112.0.0/24"]
  }
}
