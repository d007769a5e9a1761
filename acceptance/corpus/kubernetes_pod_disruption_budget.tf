# The unversioned kubernetes_pod_disruption_budget (policy/v1beta1 shape) with
# a percentage min_available.

resource "kubernetes_namespace_v1" "corpus" {
  metadata {
    name = "corpus-pdb-legacy"
  }
}

resource "kubernetes_pod_disruption_budget" "demo" {
  metadata {
    name      = "demo"
    namespace = kubernetes_namespace_v1.corpus.metadata[0].name
  }

  spec {
    min_available = "50%"

    selector {
      match_labels = {
        test = "MyExampleApp"
      }
    }
  }
}
