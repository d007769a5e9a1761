resource "kubernetes_storage_class_v1" "min" {
  metadata {
    name = "min-sc-${var.suffix}"
  }
  storage_provisioner = "min.example.com/none"
}
