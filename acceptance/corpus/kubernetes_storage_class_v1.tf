# StorageClasses: a CSI class with provisioner parameters, volume expansion,
# WaitForFirstConsumer binding, mount options and allowed topologies; and a
# no-provisioner class for local volumes.

resource "kubernetes_storage_class_v1" "fast" {
  metadata {
    name = "corpus-fast"
    labels = {
      tier = "ssd"
    }
    annotations = {
      "storageclass.kubernetes.io/is-default-class" = "false"
    }
  }

  storage_provisioner    = "ebs.csi.aws.com"
  reclaim_policy         = "Delete"
  volume_binding_mode    = "WaitForFirstConsumer"
  allow_volume_expansion = true

  parameters = {
    type                        = "gp3"
    iops                        = "4000"
    throughput                  = "250"
    encrypted                   = "true"
    "csi.storage.k8s.io/fstype" = "ext4"
  }

  mount_options = ["noatime", "nodiratime"]

  allowed_topologies {
    match_label_expressions {
      key    = "topology.kubernetes.io/zone"
      values = ["us-east-1a", "us-east-1b"]
    }
  }
}

resource "kubernetes_storage_class_v1" "local" {
  metadata {
    name = "corpus-local"
  }

  storage_provisioner = "kubernetes.io/no-provisioner"
  reclaim_policy      = "Retain"
  volume_binding_mode = "WaitForFirstConsumer"
}
