# Applies the policy `label-owner` in the namespaces labelled team=platform.
resource "kubernetes_mutating_admission_policy_binding_v1" "owner" {
  metadata {
    name = "label-owner"
  }
  spec {
    policy_name = "label-owner"
    match_resources {
      namespace_selector {
        match_labels = { team = "platform" }
      }
    }
  }
}
