resource "kubernetes_persistent_volume_claim_v1" "min" {
  metadata {
    name = "min-pvc-${var.suffix}"
  }
  spec {
    access_modes = ["ReadWriteOnce"]
    resources {
      requests = {
        storage = "1Gi"
      }
    }
  }
}
