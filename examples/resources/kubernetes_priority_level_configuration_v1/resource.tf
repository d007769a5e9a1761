# A priority level for batch clients: a few seats, requests queued beyond them.
resource "kubernetes_priority_level_configuration_v1" "batch" {
  metadata {
    name = "batch"
  }
  spec {
    type = "Limited"
    limited {
      nominal_concurrency_shares = 5
      limit_response {
        type = "Queue"
        queuing {
          queues             = 16
          hand_size          = 4
          queue_length_limit = 50
        }
      }
    }
  }
}
