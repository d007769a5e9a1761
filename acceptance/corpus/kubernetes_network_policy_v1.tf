# NetworkPolicies: a default-deny, and an API policy with ingress from pods,
# namespaces and an IP block, and egress to DNS and a database CIDR range.

resource "kubernetes_namespace_v1" "corpus" {
  metadata {
    name = "corpus-networkpolicy"
  }
}

resource "kubernetes_network_policy_v1" "default_deny" {
  metadata {
    name      = "default-deny"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
  }

  spec {
    pod_selector {}
    policy_types = ["Ingress", "Egress"]
  }
}

resource "kubernetes_network_policy_v1" "api" {
  metadata {
    name      = "api-allow"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
  }

  spec {
    pod_selector {
      match_labels = {
        app = "api"
      }
    }

    policy_types = ["Ingress", "Egress"]

    ingress {
      from {
        pod_selector {
          match_labels = {
            app = "web"
          }
        }
      }

      from {
        namespace_selector {
          match_expressions {
            key      = "kubernetes.io/metadata.name"
            operator = "In"
            values   = ["monitoring", "ingress-nginx"]
          }
        }

        pod_selector {
          match_labels = {
            role = "scraper"
          }
        }
      }

      from {
        ip_block {
          cidr   = "10.0.0.0/8"
          except = ["10.0.128.0/24", "10.0.129.0/24"]
        }
      }

      ports {
        port     = "http"
        protocol = "TCP"
      }

      ports {
        port     = "9090"
        protocol = "TCP"
      }
    }

    egress {
      to {
        namespace_selector {
          match_labels = {
            "kubernetes.io/metadata.name" = "kube-system"
          }
        }

        pod_selector {
          match_labels = {
            "k8s-app" = "kube-dns"
          }
        }
      }

      ports {
        port     = "53"
        protocol = "UDP"
      }

      ports {
        port     = "53"
        protocol = "TCP"
      }
    }

    egress {
      to {
        ip_block {
          cidr = "172.16.0.0/16"
        }
      }

      ports {
        port     = "5432"
        end_port = 5440
        protocol = "TCP"
      }
    }
  }
}
