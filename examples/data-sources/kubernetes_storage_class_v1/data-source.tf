# Reads the StorageClass fast.
data "kubernetes_storage_class_v1" "example" {
  metadata {
    name = "fast"
  }
}

output "provisioner" {
  value = data.kubernetes_storage_class_v1.example.storage_provisioner
}
