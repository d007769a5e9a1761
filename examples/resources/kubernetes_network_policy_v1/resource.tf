# Only pods labelled role=frontend may reach the web pods, and only on port 8080.
resource "kubernetes_network_policy_v1" "web" {
  metadata {
    name      = "web-ingress"
    namespace = "shop"
  }

  spec {
    pod_selector {
      match_labels = {
        app = "web"
      }
    }

    ingress {
      from {
        pod_selector {
          match_labels = {
            role = "frontend"
          }
        }
      }

      ports {
        port     = "8080"
        protocol = "TCP"
      }
    }

    policy_types = ["Ingress"]
  }
}
