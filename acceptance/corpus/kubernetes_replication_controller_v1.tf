# A ReplicationController running a small HTTP echo service, with a map
# selector, probes, resource limits and a ConfigMap volume.

resource "kubernetes_namespace_v1" "corpus" {
  metadata {
    name = "corpus-replicationcontroller"
  }
}

resource "kubernetes_replication_controller_v1" "echo" {
  metadata {
    name      = "echo"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
    labels = {
      app = "echo"
    }
  }

  spec {
    replicas          = 2
    min_ready_seconds = 5

    selector = {
      app = "echo"
    }

    template {
      metadata {
        labels = {
          app = "echo"
        }
        annotations = {
          "corpus.example.com/revision" = "1"
        }
      }

      spec {
        container {
          name  = "echo"
          image = "hashicorp/http-echo:1.0"
          args  = ["-listen=:5678", "-text=hello from corpus"]

          port {
            container_port = 5678
          }

          resources {
            limits = {
              cpu    = "250m"
              memory = "64Mi"
            }
            requests = {
              cpu    = "50m"
              memory = "16Mi"
            }
          }

          liveness_probe {
            http_get {
              path = "/"
              port = 5678
            }

            initial_delay_seconds = 3
            period_seconds        = 3
          }

          volume_mount {
            name       = "settings"
            mount_path = "/etc/echo"
          }
        }

        volume {
          name = "settings"

          config_map {
            name     = "echo-settings"
            optional = true
          }
        }
      }
    }
  }
}
