resource "kubernetes_pod_disruption_budget" "min" {
  metadata {
    name = "min-pdb-${var.suffix}"
  }
  spec {
    selector {}
  }
}
