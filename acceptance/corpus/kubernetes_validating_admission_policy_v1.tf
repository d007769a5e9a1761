# A ValidatingAdmissionPolicy (CEL) limiting Deployment replicas and requiring
# a team label, scoped by a namespace selector and a match condition, with a
# variable, an audit annotation and a message expression. hashicorp writes
# this resource's metadata and spec as attributes (`= { ... }`), not blocks.

resource "kubernetes_validating_admission_policy_v1" "replicas" {
  metadata = {
    name = "corpus-replica-limit"
    labels = {
      "app.kubernetes.io/part-of" = "corpus"
    }
  }

  spec = {
    failure_policy = "Fail"

    match_constraints = {
      match_policy = "Equivalent"

      resource_rules = [{
        api_groups   = ["apps"]
        api_versions = ["v1"]
        operations   = ["CREATE", "UPDATE"]
        resources    = ["deployments"]
      }]

      exclude_resource_rules = [{
        api_groups     = ["apps"]
        api_versions   = ["v1"]
        operations     = ["UPDATE"]
        resources      = ["deployments"]
        resource_names = ["legacy-monolith"]
      }]

      namespace_selector = {
        match_expressions = [{
          key      = "corpus.example.com/policy"
          operator = "In"
          values   = ["enforced"]
        }]
      }
    }

    match_conditions = [{
      name       = "exclude-system-users"
      expression = "!request.userInfo.username.startsWith('system:')"
    }]

    variables = [{
      name       = "replicas"
      expression = "has(object.spec.replicas) ? object.spec.replicas : 1"
    }]

    validations = [
      {
        expression         = "variables.replicas <= 5"
        message            = "Deployments may run at most 5 replicas."
        message_expression = "'replicas is ' + string(variables.replicas) + ', the limit is 5'"
        reason             = "Invalid"
      },
      {
        expression = "has(object.metadata.labels) && 'team' in object.metadata.labels"
        message    = "Deployments must carry a team label."
        reason     = "Forbidden"
      },
    ]

    audit_annotations = [{
      key              = "requested-replicas"
      value_expression = "'deployment asks for ' + string(variables.replicas) + ' replicas'"
    }]
  }
}
