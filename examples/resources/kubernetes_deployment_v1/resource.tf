resource "kubernetes_deployment_v1" "web" {
  metadata {
    name      = "web"
    namespace = "shop"
    labels = {
      app = "web"
    }
  }

  # Leave `replicas` out when an autoscaler owns the replica count.
  spec {
    replicas = 2

    selector {
      match_labels = {
        app = "web"
      }
    }

    template {
      metadata {
        labels = {
          app = "web"
        }
      }

      spec {
        container {
          name  = "web"
          image = "nginx:1.27"

          port {
            container_port = 8080
          }

          env {
            name  = "LOG_LEVEL"
            value = "info"
          }

          resources {
            requests = {
              cpu    = "100m"
              memory = "64Mi"
            }
          }
        }
      }
    }
  }
}
