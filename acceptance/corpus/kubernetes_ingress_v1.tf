# An Ingress with an ingress class, TLS for two hosts, a default backend,
# host and path rules using service ports by number and by name, and a
# resource backend. The apply waits for its load balancer's address.

resource "kubernetes_namespace_v1" "corpus" {
  metadata {
    name = "corpus-ingress"
  }
}

resource "kubernetes_service_v1" "web" {
  metadata {
    name      = "web"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
  }

  spec {
    selector = {
      app = "web"
    }

    port {
      name        = "http"
      port        = 80
      target_port = 8080
    }
  }
}

resource "kubernetes_service_v1" "api" {
  metadata {
    name      = "api"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
  }

  spec {
    selector = {
      app = "api"
    }

    port {
      name        = "http"
      port        = 8080
      target_port = 8080
    }
  }
}

resource "kubernetes_ingress_v1" "shop" {
  metadata {
    name      = "shop"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
    annotations = {
      "nginx.ingress.kubernetes.io/rewrite-target" = "/"
      "cert-manager.io/cluster-issuer"             = "letsencrypt"
    }
  }

  spec {
    ingress_class_name = "nginx"

    default_backend {
      service {
        name = kubernetes_service_v1.web.metadata[0].name

        port {
          number = 80
        }
      }
    }

    rule {
      host = "shop.example.com"

      http {
        path {
          path      = "/"
          path_type = "Prefix"

          backend {
            service {
              name = kubernetes_service_v1.web.metadata[0].name

              port {
                number = 80
              }
            }
          }
        }

        path {
          path      = "/api"
          path_type = "Prefix"

          backend {
            service {
              name = kubernetes_service_v1.api.metadata[0].name

              port {
                name = "http"
              }
            }
          }
        }
      }
    }

    rule {
      host = "static.example.com"

      http {
        path {
          path      = "/assets"
          path_type = "ImplementationSpecific"

          backend {
            resource {
              api_group = "k8s.example.com"
              kind      = "StorageBucket"
              name      = "static-assets"
            }
          }
        }
      }
    }

    tls {
      hosts       = ["shop.example.com"]
      secret_name = "shop-tls"
    }

    tls {
      hosts       = ["static.example.com"]
      secret_name = "static-tls"
    }
  }

  wait_for_load_balancer = true
}
