# Reads the PersistentVolume pv-data.
data "kubernetes_persistent_volume_v1" "example" {
  metadata {
    name = "pv-data"
  }
}

output "capacity" {
  value = data.kubernetes_persistent_volume_v1.example.spec[0].capacity
}
