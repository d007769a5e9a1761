# Devices a driver offers, published by hand: two devices any node may use.
resource "kubernetes_resource_slice_v1" "static" {
  metadata {
    name = "static-gpus"
  }
  spec {
    driver    = "gpu.example.com"
    all_nodes = true
    pool {
      name                 = "static"
      generation           = 1
      resource_slice_count = 1
    }
    device {
      name = "gpu-0"
    }
    device {
      name = "gpu-1"
    }
  }
}
