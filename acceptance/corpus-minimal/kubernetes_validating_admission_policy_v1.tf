resource "kubernetes_validating_admission_policy_v1" "min" {
  metadata = {
    name = "min-vap-${var.suffix}"
  }
  spec = {
    failure_policy = "Fail"
    match_constraints = {
      resource_rules = [{
        api_groups   = [""]
        api_versions = ["v1"]
        operations   = ["CREATE"]
        resources    = ["configmaps"]
      }]
    }
    audit_annotations = [{
      key              = "min"
      value_expression = "'min'"
    }]
  }
}
