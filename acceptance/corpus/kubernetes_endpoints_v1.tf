# A selector-less Service backed by hand-written Endpoints: two subsets with
# ready and not-ready addresses and named ports.

resource "kubernetes_namespace_v1" "corpus" {
  metadata {
    name = "corpus-endpoints"
  }
}

resource "kubernetes_service_v1" "external_db" {
  metadata {
    name      = "external-db"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
  }

  spec {
    port {
      name        = "postgres"
      port        = 5432
      target_port = 5432
    }

    port {
      name        = "metrics"
      port        = 9187
      target_port = 9187
    }
  }
}

resource "kubernetes_endpoints_v1" "external_db" {
  metadata {
    name      = kubernetes_service_v1.external_db.metadata[0].name
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
    labels = {
      app = "external-db"
    }
  }

  subset {
    address {
      ip       = "10.20.0.10"
      hostname = "db-primary"
    }

    address {
      ip = "10.20.0.11"
    }

    not_ready_address {
      ip = "10.20.0.12"
    }

    port {
      name     = "postgres"
      port     = 5432
      protocol = "TCP"
    }
  }

  subset {
    address {
      ip = "10.20.1.10"
    }

    port {
      name     = "metrics"
      port     = 9187
      protocol = "TCP"
    }
  }
}
