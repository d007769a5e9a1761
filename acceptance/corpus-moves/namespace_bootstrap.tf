# A namespace bootstrap as modules write it: one namespace per team (count), its default
# service account told to pull from a registry Secret and not to mount a token.

locals {
  teams = ["alpha", "beta"]
}

resource "kubernetes_namespace_v1" "team" {
  count = length(local.teams)

  metadata {
    name = "corpus-team-${local.teams[count.index]}"
    labels = {
      team = local.teams[count.index]
    }
  }
}

resource "kubernetes_secret_v1" "registry" {
  count = length(local.teams)

  metadata {
    name      = "registry"
    namespace = kubernetes_namespace_v1.team[count.index].metadata[0].name
  }

  type = "kubernetes.io/dockerconfigjson"

  data = {
    ".dockerconfigjson" = jsonencode({
      auths = {
        "registry.example.com" = {
          auth = base64encode("${local.teams[count.index]}:registry-pass")
        }
      }
    })
  }
}

resource "kubernetes_default_service_account_v1" "team" {
  count = length(local.teams)

  metadata {
    namespace = kubernetes_namespace_v1.team[count.index].metadata[0].name
  }

  automount_service_account_token = false

  image_pull_secret {
    name = kubernetes_secret_v1.registry[count.index].metadata[0].name
  }
}
