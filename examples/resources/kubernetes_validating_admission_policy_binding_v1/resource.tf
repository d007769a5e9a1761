# Enforces the policy `replica-limit` in the namespaces labelled environment=production, and
# records its failures in the audit log.
resource "kubernetes_validating_admission_policy_binding_v1" "replica_limit" {
  metadata {
    name = "replica-limit"
  }
  spec {
    policy_name        = "replica-limit"
    validation_actions = ["Deny", "Audit"]
    match_resources {
      namespace_selector {
        match_labels = { environment = "production" }
      }
    }
  }
}
