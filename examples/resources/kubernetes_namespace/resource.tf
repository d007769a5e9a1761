resource "kubernetes_namespace" "shop" {
  metadata {
    name = "shop"
    labels = {
      team = "shop"
    }
  }
}
