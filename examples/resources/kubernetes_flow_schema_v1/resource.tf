# Sends the reports service account's list requests to the `batch` priority level.
resource "kubernetes_flow_schema_v1" "reports" {
  metadata {
    name = "reports"
  }
  spec {
    matching_precedence = 9000
    priority_level_configuration {
      name = "batch"
    }
    distinguisher_method {
      type = "ByUser"
    }
    rule {
      subject {
        kind = "ServiceAccount"
        service_account {
          name      = "reports"
          namespace = "analytics"
        }
      }
      resource_rule {
        verbs      = ["list"]
        api_groups = ["*"]
        resources  = ["*"]
        namespaces = ["*"]
      }
    }
  }
}
