resource "kubernetes_endpoint_slice_v1" "min" {
  metadata {
    name = "min-eps-${var.suffix}"
  }
  address_type = "IPv4"
  endpoint {
    addresses = ["10.40.0.1"]
  }
  port {
    port         = "80"
    app_protocol = "http"
  }
}
