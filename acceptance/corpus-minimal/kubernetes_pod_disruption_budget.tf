resource "kubernetes_pod_disruption_budget" "min" {
  metadata {
    name = "min-pdbl-${var.suffix}"
  }
  spec {
    selector {}
  }
}
