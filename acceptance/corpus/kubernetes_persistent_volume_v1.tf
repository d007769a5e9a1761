# PersistentVolumes: a host_path volume pre-bound to a claim (claim_ref) with
# node affinity and mount options, and a local volume pinned to a node by node
# affinity. The claim lives in the file's own namespace.

resource "kubernetes_namespace_v1" "corpus" {
  metadata {
    name = "corpus-persistentvolume"
  }
}

resource "kubernetes_persistent_volume_claim_v1" "data" {
  metadata {
    name      = "data"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
  }

  spec {
    access_modes       = ["ReadWriteOnce"]
    storage_class_name = "corpus-manual"
    volume_name        = kubernetes_persistent_volume_v1.data.metadata[0].name

    resources {
      requests = {
        storage = "5Gi"
      }
    }
  }
}

resource "kubernetes_persistent_volume_v1" "data" {
  metadata {
    name = "corpus-data"
    labels = {
      type = "host-path"
    }
  }

  spec {
    capacity = {
      storage = "5Gi"
    }

    access_modes                     = ["ReadWriteOnce"]
    persistent_volume_reclaim_policy = "Retain"
    storage_class_name               = "corpus-manual"
    volume_mode                      = "Filesystem"
    mount_options                    = ["noatime"]

    claim_ref {
      name      = "data"
      namespace = kubernetes_namespace_v1.corpus.metadata[0].name
    }

    node_affinity {
      required {
        node_selector_term {
          match_expressions {
            key      = "kubernetes.io/os"
            operator = "In"
            values   = ["linux"]
          }
        }
      }
    }

    persistent_volume_source {
      host_path {
        path = "/mnt/data/corpus"
        type = "DirectoryOrCreate"
      }
    }
  }
}

resource "kubernetes_persistent_volume_v1" "local" {
  metadata {
    name = "corpus-local-ssd"
  }

  spec {
    capacity = {
      storage = "100Gi"
    }

    access_modes                     = ["ReadWriteOnce"]
    persistent_volume_reclaim_policy = "Retain"
    storage_class_name               = "corpus-local"

    node_affinity {
      required {
        node_selector_term {
          match_expressions {
            key      = "kubernetes.io/hostname"
            operator = "In"
            values   = ["worker-1"]
          }
        }
      }
    }

    persistent_volume_source {
      local {
        path = "/mnt/disks/ssd1"
      }
    }
  }
}
