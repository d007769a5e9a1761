resource "kubernetes_network_policy_v1" "min" {
  metadata {
    name = "min-np-${var.suffix}"
  }
  spec {
    pod_selector {}
    policy_types = ["Ingress"]
  }
}
