resource "kubernetes_api_service_v1" "min" {
  metadata {
    name = "v1.${var.suffix}.min.example.com"
  }
  spec {
    group                  = "${var.suffix}.min.example.com"
    group_priority_minimum = 1
    version                = "v1"
    version_priority       = 1
  }
}
