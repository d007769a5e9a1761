resource "kubernetes_node_taint" "min" {
  metadata {
    name = var.node
  }
  taint {
    key    = "minimal.example.com/${var.suffix}"
    value  = "1"
    effect = "PreferNoSchedule"
  }
}
