# A claim for one device of a class, shared by the pods that name it.
resource "kubernetes_resource_claim_v1" "gpu" {
  metadata {
    name      = "shared-gpu"
    namespace = "default"
  }
  spec {
    devices {
      request {
        name = "gpu"
        exactly {
          device_class_name = "gpu.example.com"
          allocation_mode   = "ExactCount"
          count             = 1
        }
      }
    }
  }
}
