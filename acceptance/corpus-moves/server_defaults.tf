# Blocks the configuration leaves out and the server fills in, which hashicorp's state holds:
# a StatefulSet's PVC retention policy, a ClientIP Service's timeout, a Job's selector, the
# image pull secrets a Pod gets from its service account, an autoscaler's behavior.

resource "kubernetes_namespace_v1" "corpus" {
  metadata {
    name = "corpus-defaults"
  }
}

resource "kubernetes_secret_v1" "pull" {
  metadata {
    name      = "pull"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
  }

  type = "kubernetes.io/dockerconfigjson"

  data = {
    ".dockerconfigjson" = jsonencode({ auths = { "registry.example.com" = { auth = base64encode("ci:pull") } } })
  }
}

resource "kubernetes_service_account_v1" "puller" {
  metadata {
    name      = "puller"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
  }

  image_pull_secret {
    name = kubernetes_secret_v1.pull.metadata[0].name
  }
}

resource "kubernetes_service_v1" "sticky" {
  metadata {
    name      = "sticky"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
  }

  spec {
    selector = {
      app = "cache"
    }
    session_affinity = "ClientIP"

    port {
      port        = 80
      target_port = 8080
    }
  }
}

resource "kubernetes_stateful_set_v1" "cache" {
  metadata {
    name      = "cache"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
  }

  spec {
    service_name = kubernetes_service_v1.sticky.metadata[0].name
    replicas     = 1

    selector {
      match_labels = {
        app = "cache"
      }
    }

    template {
      metadata {
        labels = {
          app = "cache"
        }
      }

      spec {
        container {
          name  = "cache"
          image = "redis:7"
        }
      }
    }
  }
}

resource "kubernetes_pod_v1" "tool" {
  metadata {
    name      = "tool"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
  }

  spec {
    service_account_name = kubernetes_service_account_v1.puller.metadata[0].name

    container {
      name  = "tool"
      image = "busybox:1.36"
    }
  }
}

resource "kubernetes_job_v1" "migrate" {
  metadata {
    name      = "migrate"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
  }

  spec {
    template {
      metadata {}

      spec {
        container {
          name    = "migrate"
          image   = "busybox:1.36"
          command = ["true"]
        }
      }
    }
  }
}

resource "kubernetes_horizontal_pod_autoscaler_v2" "cache" {
  metadata {
    name      = "cache"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
  }

  spec {
    min_replicas = 1
    max_replicas = 3

    scale_target_ref {
      api_version = "apps/v1"
      kind        = "StatefulSet"
      name        = kubernetes_stateful_set_v1.cache.metadata[0].name
    }
  }
}
