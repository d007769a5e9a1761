# Once the database's Deployment is created, wait until it is Available with a ready replica:
# the apply fails, saying what the Deployment had, when it is not within 10 minutes.
resource "kubernetes_deployment_v1" "db" {
  metadata {
    name      = "db"
    namespace = "shop"
  }
  spec {
    selector {
      match_labels = { app = "db" }
    }
    template {
      metadata {
        labels = { app = "db" }
      }
      spec {
        container {
          name  = "db"
          image = "postgres:17"
        }
      }
    }
  }
  wait_for_rollout = false

  lifecycle {
    action_trigger {
      events  = [after_create]
      actions = [action.kubernetes_wait.db_ready]
    }
  }
}

action "kubernetes_wait" "db_ready" {
  config {
    api_version = "apps/v1"
    kind        = "Deployment"
    name        = "db"
    namespace   = "shop"
    condition {
      type = "Available"
    }
    fields = {
      "status.readyReplicas" = "1"
    }
    timeout = "10m"
  }
}

# Any kind, with a kubectl JSONPath expression (terraform apply -invoke=action.kubernetes_wait.db_address):
action "kubernetes_wait" "db_address" {
  config {
    api_version = "v1"
    kind        = "Service"
    name        = "db"
    namespace   = "shop"
    jsonpath {
      path = "{.status.loadBalancer.ingress[0].ip}"
    }
  }
}
