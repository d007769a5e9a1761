# Any kind, written as its manifest: here a PodDisruptionBudget.
resource "kubernetes_manifest" "web_pdb" {
  manifest = {
    apiVersion = "policy/v1"
    kind       = "PodDisruptionBudget"
    metadata = {
      name      = "web"
      namespace = "shop"
    }
    spec = {
      minAvailable = 1
      selector = {
        matchLabels = {
          app = "web"
        }
      }
    }
  }
}
