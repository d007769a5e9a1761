provider "kubernetes" {
  estate         = "network"
  config_path    = var.kubeconfig
  config_context = var.kube_context
}

provider "records" {
  estate         = "network"
  config_path    = var.kubeconfig
  config_context = var.kube_context
}

resource "kubernetes_namespace" "platform" {
  metadata {
    name = "platform"
    labels = {
      team = "platform"
    }
  }
}

# Nothing reaches the platform's pods except traffic from the consumer namespace.
resource "kubernetes_network_policy" "default_deny" {
  metadata {
    name      = "default-deny"
    namespace = kubernetes_namespace.platform.metadata[0].name
  }

  spec {
    pod_selector {}
    policy_types = ["Ingress"]

    ingress {
      from {
        namespace_selector {
          match_labels = {
            "kubernetes.io/metadata.name" = var.consumer_namespace
          }
        }
      }
    }
  }
}

resource "kubernetes_service" "gateway" {
  metadata {
    name      = "gateway"
    namespace = kubernetes_namespace.platform.metadata[0].name
    labels = {
      app = "gateway"
    }
  }

  spec {
    type = "ClusterIP"
    selector = {
      app = "gateway"
    }

    port {
      name        = "http"
      port        = 80
      target_port = "8080"
      protocol    = "TCP"
    }
  }
}

resource "kubernetes_config_map" "routes" {
  metadata {
    name      = "routes"
    namespace = kubernetes_namespace.platform.metadata[0].name
  }

  data = {
    "routes.yaml" = <<-YAML
      - prefix: /shop
        upstream: web.${var.consumer_namespace}.svc.${var.cluster_domain}:80
    YAML
  }
}

resource "kubernetes_config_map" "limits" {
  metadata {
    name      = "limits"
    namespace = kubernetes_namespace.platform.metadata[0].name
  }

  data = {
    requests_per_second = "200"
    burst               = "400"
  }
}
