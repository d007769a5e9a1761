# An APIService registering an aggregated API group served by a Service in the
# file's own namespace, with group and version priorities. With nothing
# serving behind the Service the APIService reports itself unavailable, which
# does not stop it being created or destroyed.

resource "kubernetes_namespace_v1" "corpus" {
  metadata {
    name = "corpus-apiservice"
  }
}

resource "kubernetes_service_v1" "metrics_api" {
  metadata {
    name      = "metrics-api"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
  }

  spec {
    selector = {
      app = "metrics-api"
    }

    port {
      name        = "https"
      port        = 443
      target_port = 6443
    }
  }
}

resource "kubernetes_api_service_v1" "metrics" {
  metadata {
    name = "v1alpha1.corpus.example.com"
    labels = {
      "app.kubernetes.io/part-of" = "corpus"
    }
  }

  spec {
    group                    = "corpus.example.com"
    version                  = "v1alpha1"
    group_priority_minimum   = 1000
    version_priority         = 15
    insecure_skip_tls_verify = true

    service {
      name      = kubernetes_service_v1.metrics_api.metadata[0].name
      namespace = kubernetes_namespace_v1.corpus.metadata[0].name
      port      = 443
    }
  }
}
