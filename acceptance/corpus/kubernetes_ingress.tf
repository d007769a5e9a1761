# The unversioned kubernetes_ingress in its old (extensions / networking
# v1beta1) shape: service_name / service_port backends, a default backend,
# host rules and TLS.

resource "kubernetes_namespace_v1" "corpus" {
  metadata {
    name = "corpus-ingress-legacy"
  }
}

resource "kubernetes_service_v1" "app" {
  metadata {
    name      = "app"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
  }

  spec {
    selector = {
      app = "app"
    }

    port {
      name        = "http"
      port        = 8080
      target_port = 8080
    }
  }
}

resource "kubernetes_ingress" "app" {
  metadata {
    name      = "app"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
    annotations = {
      "nginx.ingress.kubernetes.io/ssl-redirect" = "true"
    }
  }

  spec {
    ingress_class_name = "nginx"

    backend {
      service_name = kubernetes_service_v1.app.metadata[0].name
      service_port = 8080
    }

    rule {
      host = "app.example.com"

      http {
        path {
          path = "/app1/*"

          backend {
            service_name = kubernetes_service_v1.app.metadata[0].name
            service_port = 8080
          }
        }

        path {
          path = "/app2/*"

          backend {
            service_name = kubernetes_service_v1.app.metadata[0].name
            service_port = "http"
          }
        }
      }
    }

    tls {
      hosts       = ["app.example.com"]
      secret_name = "app-tls"
    }
  }
}
