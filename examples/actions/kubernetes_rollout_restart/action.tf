# Restart the web Deployment's pods whenever its ConfigMap changes: the pods read the
# configuration at start. The restart waits for the rollout and shows its progress
# ("web: 2 of 3 updated, 1 available"); the Deployment's next plan stays empty.
resource "kubernetes_config_map_v1" "web" {
  metadata {
    name      = "web-config"
    namespace = "shop"
  }
  data = {
    "greeting.txt" = "hello"
  }

  lifecycle {
    action_trigger {
      events  = [after_update]
      actions = [action.kubernetes_rollout_restart.web]
    }
  }
}

action "kubernetes_rollout_restart" "web" {
  config {
    kind      = "Deployment"
    name      = "web"
    namespace = "shop"
    timeout   = "5m"
  }
}

# Or at any time: terraform apply -invoke=action.kubernetes_rollout_restart.web
