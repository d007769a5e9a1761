resource "kubernetes_service_account_v1" "ci" {
  metadata {
    name      = "ci"
    namespace = "build"
  }
}

# A short-lived token for the service account, for a CI system's kubeconfig.
resource "kubernetes_token_request_v1" "ci" {
  metadata {
    name      = kubernetes_service_account_v1.ci.metadata[0].name
    namespace = kubernetes_service_account_v1.ci.metadata[0].namespace
  }

  spec {
    audiences          = ["https://kubernetes.default.svc.cluster.local"]
    expiration_seconds = 3600
  }
}

output "ci_token" {
  value     = kubernetes_token_request_v1.ci.token
  sensitive = true
}
