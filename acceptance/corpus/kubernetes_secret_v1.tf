# Secrets of the common types: Opaque with plain data, a docker config for
# image pulls, basic-auth, a service account token, and an immutable one with
# binary data.

resource "kubernetes_namespace_v1" "corpus" {
  metadata {
    name = "corpus-secret"
  }
}

resource "kubernetes_secret_v1" "db" {
  metadata {
    name      = "db-credentials"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
    labels = {
      app = "db"
    }
  }

  data = {
    username = "app"
    password = "P4ssw0rd-corpus"
  }

  type = "Opaque"
}

resource "kubernetes_secret_v1" "registry" {
  metadata {
    name      = "registry-pull"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
  }

  type = "kubernetes.io/dockerconfigjson"

  data = {
    ".dockerconfigjson" = jsonencode({
      auths = {
        "registry.example.com" = {
          username = "corpus"
          password = "registry-token"
          auth     = base64encode("corpus:registry-token")
        }
      }
    })
  }
}

resource "kubernetes_secret_v1" "basic_auth" {
  metadata {
    name      = "basic-auth"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
  }

  type = "kubernetes.io/basic-auth"

  data = {
    username = "admin"
    password = "t0p-Secret"
  }
}

resource "kubernetes_service_account_v1" "ci" {
  metadata {
    name      = "ci-deployer"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
  }
}

resource "kubernetes_secret_v1" "ci_token" {
  metadata {
    name      = "ci-deployer-token"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
    annotations = {
      "kubernetes.io/service-account.name" = kubernetes_service_account_v1.ci.metadata[0].name
    }
  }

  type = "kubernetes.io/service-account-token"
}

resource "kubernetes_secret_v1" "frozen" {
  metadata {
    name      = "frozen"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
  }

  immutable = true

  binary_data = {
    "keystore.bin" = "AAECAwQFBgcICQ=="
  }
}
