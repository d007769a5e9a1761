resource "kubernetes_stateful_set_v1" "min" {
  metadata {
    name = "min-sts-${var.suffix}"
  }
  spec {
    service_name = "min-sts-${var.suffix}"
    selector {
      match_labels = {
        app = "min-sts-${var.suffix}"
      }
    }
    template {
      metadata {
        labels = {
          app = "min-sts-${var.suffix}"
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
