# An EndpointSlice for a selector-less Service: IPv4 endpoints with
# conditions, hostnames, zones and a target reference, plus named ports.

resource "kubernetes_namespace_v1" "corpus" {
  metadata {
    name = "corpus-endpointslice"
  }
}

resource "kubernetes_service_v1" "search" {
  metadata {
    name      = "search"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
  }

  spec {
    port {
      name        = "http"
      port        = 9200
      target_port = 9200
    }
  }
}

resource "kubernetes_endpoint_slice_v1" "search" {
  metadata {
    name      = "search-manual"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
    labels = {
      "kubernetes.io/service-name"             = kubernetes_service_v1.search.metadata[0].name
      "endpointslice.kubernetes.io/managed-by" = "terraform"
    }
  }

  address_type = "IPv4"

  endpoint {
    addresses = ["10.30.0.10"]
    hostname  = "search-0"
    zone      = "zone-a"

    condition {
      ready       = true
      serving     = true
      terminating = false
    }

    target_ref {
      name      = "search-0"
      namespace = kubernetes_namespace_v1.corpus.metadata[0].name
    }
  }

  endpoint {
    addresses = ["10.30.0.11"]
    hostname  = "search-1"
    zone      = "zone-b"

    condition {
      ready = false
    }
  }

  port {
    name         = "http"
    port         = "9200"
    protocol     = "TCP"
    app_protocol = "http"
  }
}
