# PersistentVolumeClaims: one requesting a named storage class, one binding a
# pre-provisioned volume by selector, and a raw block claim. None waits to be
# bound.

resource "kubernetes_namespace_v1" "corpus" {
  metadata {
    name = "corpus-pvc"
  }
}

resource "kubernetes_persistent_volume_claim_v1" "uploads" {
  metadata {
    name      = "uploads"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
    labels = {
      app = "web"
    }
  }

  spec {
    access_modes       = ["ReadWriteOnce"]
    storage_class_name = "standard"

    resources {
      requests = {
        storage = "5Gi"
      }
    }
  }

  wait_until_bound = false
}

resource "kubernetes_persistent_volume_claim_v1" "archive" {
  metadata {
    name      = "archive"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
  }

  spec {
    access_modes       = ["ReadWriteMany"]
    storage_class_name = "corpus-manual"

    selector {
      match_labels = {
        type = "archive"
      }

      match_expressions {
        key      = "environment"
        operator = "In"
        values   = ["production"]
      }
    }

    resources {
      requests = {
        storage = "50Gi"
      }
      limits = {
        storage = "100Gi"
      }
    }
  }

  wait_until_bound = false
}

resource "kubernetes_persistent_volume_claim_v1" "block" {
  metadata {
    name      = "raw-block"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
  }

  spec {
    access_modes       = ["ReadWriteOnce"]
    storage_class_name = "standard"
    volume_mode        = "Block"

    resources {
      requests = {
        storage = "20Gi"
      }
    }
  }

  wait_until_bound = false
}
