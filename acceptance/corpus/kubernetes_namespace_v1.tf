# A Namespace with labels (including Pod Security admission labels) and
# annotations, and a delete timeout.

resource "kubernetes_namespace_v1" "corpus" {
  metadata {
    name = "corpus-namespace"

    labels = {
      "app.kubernetes.io/part-of"          = "corpus"
      "pod-security.kubernetes.io/enforce" = "baseline"
      "pod-security.kubernetes.io/warn"    = "restricted"
      team                                 = "platform"
    }

    annotations = {
      "corpus.example.com/description" = "Namespace created by the acceptance corpus"
      "corpus.example.com/owner"       = "platform-team"
    }
  }

  timeouts {
    delete = "10m"
  }
}
