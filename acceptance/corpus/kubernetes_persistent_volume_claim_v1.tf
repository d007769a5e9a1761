# PersistentVolumeClaims: one requesting a named storage class, one binding a
# pre-provisioned volume by selector (the volume is here too), and a raw block
# claim.

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
}

resource "kubernetes_persistent_volume_v1" "archive" {
  metadata {
    name = "corpus-archive"
    labels = {
      type        = "archive"
      environment = "production"
    }
  }

  spec {
    capacity = {
      storage = "100Gi"
    }

    access_modes                     = ["ReadWriteMany"]
    persistent_volume_reclaim_policy = "Retain"
    storage_class_name               = "corpus-manual"

    persistent_volume_source {
      nfs {
        server = "nfs.example.com"
        path   = "/exports/archive"
      }
    }
  }
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
}
