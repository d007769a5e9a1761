resource "kubernetes_csi_driver_v1" "min" {
  metadata {
    name = "min-csi-${var.suffix}.example.com"
  }
}
