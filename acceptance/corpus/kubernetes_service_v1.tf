# Services of each common type: a ClusterIP service with named target ports and
# session affinity, a NodePort with local traffic policy, a headless service,
# an ExternalName alias, and a LoadBalancer whose address the apply waits for.

resource "kubernetes_namespace_v1" "corpus" {
  metadata {
    name = "corpus-service"
  }
}

resource "kubernetes_service_v1" "api" {
  metadata {
    name      = "api"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
    labels = {
      app = "api"
    }
    annotations = {
      "prometheus.io/scrape" = "true"
    }
  }

  spec {
    type = "ClusterIP"

    selector = {
      app = "api"
    }

    session_affinity = "ClientIP"

    session_affinity_config {
      client_ip {
        timeout_seconds = 3600
      }
    }

    port {
      name         = "http"
      port         = 80
      target_port  = "http"
      protocol     = "TCP"
      app_protocol = "http"
    }

    port {
      name        = "grpc"
      port        = 9090
      target_port = 9090
    }
  }
}

resource "kubernetes_service_v1" "web" {
  metadata {
    name      = "web"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
  }

  spec {
    type                    = "NodePort"
    external_traffic_policy = "Local"
    internal_traffic_policy = "Cluster"

    selector = {
      app = "web"
    }

    port {
      name        = "http"
      port        = 8080
      target_port = 8080
      # In the static band (the lowest 86 ports of the default range), which the API server
      # hands out last: on a shared cluster no Service given a port takes this one first.
      node_port   = 30080
    }
  }
}

resource "kubernetes_service_v1" "peers" {
  metadata {
    name      = "peers"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
  }

  spec {
    cluster_ip                  = "None"
    publish_not_ready_addresses = true

    selector = {
      app = "cluster"
    }

    port {
      name = "gossip"
      port = 7946
    }

    port {
      name     = "gossip-udp"
      port     = 7946
      protocol = "UDP"
    }
  }
}

resource "kubernetes_service_v1" "legacy_db" {
  metadata {
    name      = "legacy-db"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
  }

  spec {
    type          = "ExternalName"
    external_name = "db.legacy.example.com"
  }
}

resource "kubernetes_service_v1" "public" {
  metadata {
    name      = "web-public"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
    annotations = {
      "service.beta.kubernetes.io/aws-load-balancer-type" = "nlb"
    }
  }

  spec {
    type                    = "LoadBalancer"
    external_traffic_policy = "Cluster"
    session_affinity        = "None"

    selector = {
      app = "web"
    }

    port {
      name        = "https"
      port        = 443
      target_port = 8443
    }
  }
}
