# A claim made for each pod that names the template.
resource "kubernetes_resource_claim_template_v1" "per_pod" {
  metadata {
    name      = "gpu-per-pod"
    namespace = "default"
  }
  spec {
    spec {
      devices {
        request {
          name = "gpu"
          exactly {
            device_class_name = "gpu.example.com"
          }
        }
      }
    }
  }
}
