# Scale the web Deployment to 5 replicas for a sale, without touching its configuration:
#   terraform apply -invoke=action.kubernetes_scale.web_sale
# The resource that manages the Deployment leaves `replicas` out of its configuration, so
# its next plan stays empty.
action "kubernetes_scale" "web_sale" {
  config {
    kind      = "Deployment"
    name      = "web"
    namespace = "shop"
    replicas  = 5
  }
}
