# Labels every ConfigMap created where a binding applies the policy.
resource "kubernetes_mutating_admission_policy_v1" "owner" {
  metadata {
    name = "label-owner"
  }
  spec {
    failure_policy      = "Fail"
    reinvocation_policy = "Never"
    match_constraints {
      resource_rule {
        api_groups   = [""]
        api_versions = ["v1"]
        operations   = ["CREATE"]
        resources    = ["configmaps"]
      }
    }
    mutation {
      patch_type = "ApplyConfiguration"
      apply_configuration {
        expression = "Object{metadata: Object.metadata{labels: {\"owner\": \"platform\"}}}"
      }
    }
  }
}
