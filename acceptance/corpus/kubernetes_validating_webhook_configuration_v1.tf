# A ValidatingWebhookConfiguration calling an in-cluster service for pod and
# deployment changes, with namespace and object selectors, a match policy and
# failure_policy = "Ignore" (the service need not exist for creation).

resource "kubernetes_namespace_v1" "corpus" {
  metadata {
    name = "corpus-validatingwebhook"
  }
}

resource "kubernetes_validating_webhook_configuration_v1" "policy" {
  metadata {
    name = "corpus-policy-validator"
    labels = {
      "app.kubernetes.io/part-of" = "corpus"
    }
  }

  webhook {
    name                      = "pods.policy.corpus.example.com"
    admission_review_versions = ["v1", "v1beta1"]
    side_effects              = "None"
    failure_policy            = "Ignore"
    match_policy              = "Equivalent"
    timeout_seconds           = 5

    client_config {
      service {
        namespace = kubernetes_namespace_v1.corpus.metadata[0].name
        name      = "policy-webhook"
        path      = "/validate/pods"
        port      = 8443
      }
    }

    rule {
      api_groups   = [""]
      api_versions = ["v1"]
      operations   = ["CREATE", "UPDATE"]
      resources    = ["pods"]
      scope        = "Namespaced"
    }

    namespace_selector {
      match_expressions {
        key      = "policy.corpus.example.com/enforce"
        operator = "In"
        values   = ["true"]
      }
    }

    object_selector {
      match_labels = {
        "policy.corpus.example.com/validate" = "true"
      }
    }
  }

  webhook {
    name                      = "deployments.policy.corpus.example.com"
    admission_review_versions = ["v1"]
    side_effects              = "None"
    failure_policy            = "Ignore"
    timeout_seconds           = 10

    client_config {
      service {
        namespace = kubernetes_namespace_v1.corpus.metadata[0].name
        name      = "policy-webhook"
        path      = "/validate/deployments"
      }
    }

    rule {
      api_groups   = ["apps"]
      api_versions = ["v1"]
      operations   = ["CREATE", "UPDATE", "DELETE"]
      resources    = ["deployments", "deployments/scale"]
      scope        = "*"
    }

    namespace_selector {
      match_labels = {
        "policy.corpus.example.com/enforce" = "true"
      }
    }
  }
}
