resource "kubernetes_persistent_volume_v1" "min" {
  metadata {
    name = "min-pv-${var.suffix}"
  }
  spec {
    capacity = {
      storage = "1Gi"
    }
    access_modes = ["ReadWriteOnce"]
    persistent_volume_source {
      host_path {
        path = "/tmp/min-pv-${var.suffix}"
      }
    }
  }
}
