resource "kubernetes_daemonset" "min" {
  metadata {
    name = "min-dsl-${var.suffix}"
  }
  spec {
    # apps/v1 requires a selector; hashicorp sends none unless written.
    selector {
      match_labels = {
        app = "min-dsl-${var.suffix}"
      }
    }
    template {
      metadata {
        labels = {
          app = "min-dsl-${var.suffix}"
        }
      }
      spec {
        container {
          name  = "main"
          image = "nginx"
        }
      }
    }
  }
}
