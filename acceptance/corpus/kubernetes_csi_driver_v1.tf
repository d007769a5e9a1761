# CSIDriver objects: one that needs attachment and pod info on mount and
# supports persistent and ephemeral volumes, one attach-free driver.

resource "kubernetes_csi_driver_v1" "block" {
  metadata {
    name = "corpus-block.csi.example.com"
    labels = {
      vendor = "example"
    }
  }

  spec {
    attach_required        = true
    pod_info_on_mount      = true
    volume_lifecycle_modes = ["Persistent", "Ephemeral"]
  }
}

resource "kubernetes_csi_driver_v1" "secrets_store" {
  metadata {
    name = "corpus-secrets-store.csi.example.com"
  }

  spec {
    attach_required        = false
    pod_info_on_mount      = false
    volume_lifecycle_modes = ["Ephemeral"]
  }
}
