# A class of volume attributes (IOPS, throughput) that a claim names in
# `volume_attributes_class_name`; its CSI driver applies them.
resource "kubernetes_volume_attributes_class_v1" "gold" {
  metadata {
    name = "gold"
  }
  driver_name = "ebs.csi.aws.com"
  parameters = {
    iops       = "6000"
    throughput = "250"
  }
}
