# A ServiceAccount with image pull secrets, a mountable secret, IRSA-style
# annotations and token automounting switched off.

resource "kubernetes_namespace_v1" "corpus" {
  metadata {
    name = "corpus-serviceaccount"
  }
}

resource "kubernetes_secret_v1" "pull" {
  metadata {
    name      = "registry-pull"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
  }

  type = "kubernetes.io/dockerconfigjson"

  data = {
    ".dockerconfigjson" = jsonencode({
      auths = {
        "registry.example.com" = {
          auth = base64encode("corpus:registry-token")
        }
      }
    })
  }
}

resource "kubernetes_service_account_v1" "app" {
  metadata {
    name      = "app"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
    labels = {
      app = "app"
    }
    annotations = {
      "eks.amazonaws.com/role-arn" = "arn:aws:iam::123456789012:role/corpus-app"
    }
  }

  automount_service_account_token = false

  image_pull_secret {
    name = kubernetes_secret_v1.pull.metadata[0].name
  }

  secret {
    name = "app-config-secret"
  }
}
