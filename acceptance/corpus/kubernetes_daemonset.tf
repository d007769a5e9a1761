# The unversioned kubernetes_daemonset: a node exporter with host networking
# and PID namespace, read-only host_path mounts and a toleration for every taint.

resource "kubernetes_namespace_v1" "corpus" {
  metadata {
    name = "corpus-daemonset-legacy"
  }
}

resource "kubernetes_daemonset" "node_exporter" {
  metadata {
    name      = "node-exporter"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
    labels = {
      app = "node-exporter"
    }
  }

  spec {
    selector {
      match_labels = {
        app = "node-exporter"
      }
    }

    strategy {
      type = "RollingUpdate"

      rolling_update {
        max_unavailable = "10%"
      }
    }

    template {
      metadata {
        labels = {
          app = "node-exporter"
        }
      }

      spec {
        host_network = true
        host_pid     = true
        dns_policy   = "ClusterFirstWithHostNet"

        node_selector = {
          "kubernetes.io/os" = "linux"
        }

        toleration {
          operator = "Exists"
        }

        container {
          name  = "node-exporter"
          image = "prom/node-exporter:v1.8.2"
          args  = ["--path.procfs=/host/proc", "--path.sysfs=/host/sys", "--path.rootfs=/host/root"]

          port {
            name           = "metrics"
            container_port = 9100
            host_port      = 9100
          }

          resources {
            limits = {
              cpu    = "250m"
              memory = "180Mi"
            }
            requests = {
              cpu    = "100m"
              memory = "64Mi"
            }
          }

          readiness_probe {
            http_get {
              path = "/"
              port = 9100
            }
          }

          security_context {
            run_as_non_root = true
            run_as_user     = 65534
          }

          volume_mount {
            name       = "proc"
            mount_path = "/host/proc"
            read_only  = true
          }

          volume_mount {
            name       = "sys"
            mount_path = "/host/sys"
            read_only  = true
          }

          volume_mount {
            name              = "root"
            mount_path        = "/host/root"
            mount_propagation = "HostToContainer"
            read_only         = true
          }
        }

        volume {
          name = "proc"

          host_path {
            path = "/proc"
          }
        }

        volume {
          name = "sys"

          host_path {
            path = "/sys"
          }
        }

        volume {
          name = "root"

          host_path {
            path = "/"
          }
        }
      }
    }
  }
}
