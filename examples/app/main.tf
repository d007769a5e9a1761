provider "kubernetes" {
  estate         = "app"
  config_path    = var.kubeconfig
  config_context = var.kube_context
}

provider "records" {
  estate         = "app"
  config_path    = var.kubeconfig
  config_context = var.kube_context
}

locals {
  labels = {
    app = "web"
  }
}

resource "kubernetes_namespace" "shop" {
  metadata {
    name = "shop"
    labels = {
      team = "shop"
    }
  }
}

resource "kubernetes_config_map" "app" {
  metadata {
    name      = "app-config"
    namespace = kubernetes_namespace.shop.metadata[0].name
  }

  data = {
    gateway   = "http://${local.gateway_host}:80"
    log_level = var.log_level
  }
}

resource "kubernetes_config_map" "shard" {
  count = var.shard_count

  metadata {
    name      = "shard-${count.index}"
    namespace = kubernetes_namespace.shop.metadata[0].name
  }

  data = {
    index = tostring(count.index)
  }
}

resource "kubernetes_service_account" "app" {
  metadata {
    name      = "app"
    namespace = kubernetes_namespace.shop.metadata[0].name
  }
}

resource "kubernetes_service" "web" {
  metadata {
    name      = "web"
    namespace = kubernetes_namespace.shop.metadata[0].name
    labels    = local.labels
  }

  spec {
    selector = local.labels

    port {
      name        = "http"
      port        = 80
      target_port = "8080"
    }
  }
}

resource "kubernetes_deployment" "web" {
  metadata {
    name      = "web"
    namespace = kubernetes_namespace.shop.metadata[0].name
    labels    = local.labels
  }

  # No `replicas`: the autoscaler below owns the replica count.
  spec {
    selector {
      match_labels = local.labels
    }

    template {
      metadata {
        labels = local.labels
      }

      spec {
        service_account_name = kubernetes_service_account.app.metadata[0].name

        container {
          name  = "web"
          image = var.image

          port {
            container_port = 8080
          }

          env {
            name  = "GATEWAY_HOST"
            value = local.gateway_host
          }

          env_from {
            config_map_ref {
              name = kubernetes_config_map.app.metadata[0].name
            }
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

  wait_for_rollout = var.wait_for_rollout
}

resource "kubernetes_horizontal_pod_autoscaler_v2" "web" {
  metadata {
    name      = "web"
    namespace = kubernetes_namespace.shop.metadata[0].name
  }

  spec {
    min_replicas = 1
    max_replicas = 5

    scale_target_ref {
      api_version = "apps/v1"
      kind        = "Deployment"
      name        = kubernetes_deployment.web.metadata[0].name
    }

    metric {
      type = "Resource"
      resource {
        name = "cpu"
        target {
          type                = "Utilization"
          average_utilization = 70
        }
      }
    }
  }
}

# Handed over to the platform team: lives in their namespace, but belongs to this estate.
resource "kubernetes_manifest" "handoff" {
  manifest = {
    apiVersion = "v1"
    kind       = "ConfigMap"
    metadata = {
      name      = "handoff"
      namespace = local.platform_namespace
    }
    data = {
      service = "web.${kubernetes_namespace.shop.metadata[0].name}.svc"
      contact = "shop-team"
    }
  }
}
