resource "kubernetes_daemon_set_v1" "min" {
  metadata {
    name = "min-ds-${var.suffix}"
  }
  spec {
    # apps/v1 requires a selector; hashicorp sends none unless written.
    selector {
      match_labels = {
        app = "min-ds-${var.suffix}"
      }
    }
    template {
      metadata {
        labels = {
          app = "min-ds-${var.suffix}"
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
