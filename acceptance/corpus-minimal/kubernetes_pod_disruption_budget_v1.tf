resource "kubernetes_pod_disruption_budget_v1" "min" {
  metadata {
    name = "min-pdb-${var.suffix}"
  }
  spec {
    selector {}
  }
}
