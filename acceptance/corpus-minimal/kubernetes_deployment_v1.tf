resource "kubernetes_deployment_v1" "min" {
  metadata {
    name = "min-dep-${var.suffix}"
  }
  spec {
    # apps/v1 requires a selector; hashicorp sends none unless written.
    selector {
      match_labels = {
        app = "min-dep-${var.suffix}"
      }
    }
    template {
      metadata {
        labels = {
          app = "min-dep-${var.suffix}"
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
