# Lists the Nodes labelled for the GPU pool, in one request.
data "kubernetes_nodes" "gpu" {
  metadata {
    labels = {
      "pool" = "gpu"
    }
  }
}

output "gpu_nodes" {
  value = [for node in data.kubernetes_nodes.gpu.nodes : node.metadata[0].name]
}
