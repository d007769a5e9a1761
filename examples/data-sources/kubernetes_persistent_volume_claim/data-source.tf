# Reads the PersistentVolumeClaim shop/data.
data "kubernetes_persistent_volume_claim" "example" {
  metadata {
    name      = "data"
    namespace = "shop"
  }
}

output "volume" {
  value = data.kubernetes_persistent_volume_claim.example.spec[0].volume_name
}
