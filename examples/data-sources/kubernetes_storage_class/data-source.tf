# Reads the StorageClass fast.
data "kubernetes_storage_class" "example" {
  metadata {
    name = "fast"
  }
}

output "provisioner" {
  value = data.kubernetes_storage_class.example.storage_provisioner
}
