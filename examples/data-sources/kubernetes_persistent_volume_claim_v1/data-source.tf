# Reads the PersistentVolumeClaim shop/data.
data "kubernetes_persistent_volume_claim_v1" "example" {
  metadata {
    name      = "data"
    namespace = "shop"
  }
}

output "volume" {
  value = data.kubernetes_persistent_volume_claim_v1.example.spec[0].volume_name
}
