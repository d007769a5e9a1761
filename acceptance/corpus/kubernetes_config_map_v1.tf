# ConfigMaps with plain keys, a multi-line file rendered from a heredoc,
# binary data, and an immutable one.

resource "kubernetes_namespace_v1" "corpus" {
  metadata {
    name = "corpus-configmap"
  }
}

resource "kubernetes_config_map_v1" "app" {
  metadata {
    name      = "app-config"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
    labels = {
      app = "app"
    }
    annotations = {
      "corpus.example.com/checksum" = "v1"
    }
  }

  data = {
    LOG_LEVEL          = "debug"
    FEATURE_FLAGS      = "search,checkout"
    "application.yaml" = <<-EOT
      server:
        port: 8080
      database:
        host: db.corpus-configmap.svc.cluster.local
        pool: 10
    EOT
  }

  binary_data = {
    "logo.png" = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
  }
}

resource "kubernetes_config_map_v1" "release" {
  metadata {
    name      = "release-info"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
  }

  immutable = true

  data = {
    version = "1.4.2"
    commit  = "3f2c1ab"
  }
}
