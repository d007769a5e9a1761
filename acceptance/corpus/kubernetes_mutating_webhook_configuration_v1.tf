# A MutatingWebhookConfiguration for a sidecar injector: a service-backed
# webhook with reinvocation, selectors and failure_policy = "Ignore", plus a
# URL-based webhook with a CA bundle. Both only match namespaces that opt in by
# label, so they do not slow down the rest of the cluster.

resource "kubernetes_namespace_v1" "corpus" {
  metadata {
    name = "corpus-mutatingwebhook"
  }
}

resource "kubernetes_mutating_webhook_configuration_v1" "injector" {
  metadata {
    name = "corpus-sidecar-injector"
  }

  webhook {
    name                      = "sidecar.injector.corpus.example.com"
    admission_review_versions = ["v1"]
    side_effects              = "None"
    failure_policy            = "Ignore"
    reinvocation_policy       = "IfNeeded"
    match_policy              = "Equivalent"
    timeout_seconds           = 10

    client_config {
      service {
        namespace = kubernetes_namespace_v1.corpus.metadata[0].name
        name      = "sidecar-injector"
        path      = "/inject"
        port      = 443
      }
    }

    rule {
      api_groups   = [""]
      api_versions = ["v1"]
      operations   = ["CREATE"]
      resources    = ["pods"]
      scope        = "Namespaced"
    }

    namespace_selector {
      match_expressions {
        key      = "sidecar-injection"
        operator = "In"
        values   = ["enabled"]
      }

      match_expressions {
        key      = "kubernetes.io/metadata.name"
        operator = "NotIn"
        values   = ["kube-system", "kube-public"]
      }
    }

    object_selector {
      match_expressions {
        key      = "sidecar.corpus.example.com/inject"
        operator = "NotIn"
        values   = ["false"]
      }
    }
  }

  webhook {
    name                      = "defaults.corpus.example.com"
    admission_review_versions = ["v1", "v1beta1"]
    side_effects              = "NoneOnDryRun"
    failure_policy            = "Ignore"
    timeout_seconds           = 5

    client_config {
      url       = "https://defaults.corpus.example.com:8443/mutate"
      ca_bundle = <<-EOT
        -----BEGIN CERTIFICATE-----
        MIIBjjCCATOgAwIBAgIUNIfCakA29R8cSxSl676CKqRS4iwwCgYIKoZIzj0EAwIw
        HDEaMBgGA1UEAwwRY29ycHVzLXdlYmhvb2stY2EwHhcNMjYxMjAzMDM0NjU2WhcN
        MzYxMTMwMDM0NjU2WjAcMRowGAYDVQQDDBFjb3JwdXMtd2ViaG9vay1jYTBZMBMG
        ByqGSM49AgEGCCqGSM49AwEHA0IABAUCEbOIEvxwpnOzCzzHlNw8HBOyEeKIMQd0
        7M7hLA6qup1zFTyylHu0re6oY7mxUnR+j5L5A4qsiXwz327+2dWjUzBRMB0GA1Ud
        DgQWBBRr5xim+fGkGBpCMFX5qMEAiHvUCDAfBgNVHSMEGDAWgBRr5xim+fGkGBpC
        MFX5qMEAiHvUCDAPBgNVHRMBAf8EBTADAQH/MAoGCCqGSM49BAMCA0kAMEYCIQCJ
        n73VW94iRmuDE0o8SnyAx1EunSvgtrm5xmMHCmOYNwIhAKQvpWJtVceBUxmjLaD2
        QfxKRNCVHB6CxXlzaxQ3LRNn
        -----END CERTIFICATE-----
      EOT
    }

    rule {
      api_groups   = ["batch"]
      api_versions = ["v1"]
      operations   = ["CREATE", "UPDATE"]
      resources    = ["jobs", "cronjobs"]
    }

    namespace_selector {
      match_labels = {
        "defaults.corpus.example.com/enabled" = "true"
      }
    }
  }
}
