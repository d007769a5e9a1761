# IngressClasses: one with a namespaced parameters reference (explicitly not
# the cluster default) and one with cluster-scoped parameters.

resource "kubernetes_ingress_class_v1" "default" {
  metadata {
    name = "corpus-nginx"
    annotations = {
      "ingressclass.kubernetes.io/is-default-class" = "false"
    }
  }

  spec {
    controller = "k8s.io/ingress-nginx"

    parameters {
      api_group = "k8s.example.com"
      kind      = "IngressParameters"
      name      = "external-lb"
      scope     = "Namespace"
      namespace = "ingress-nginx"
    }
  }
}

resource "kubernetes_ingress_class_v1" "internal" {
  metadata {
    name = "corpus-internal"
  }

  spec {
    controller = "example.com/ingress-controller"

    parameters {
      api_group = "k8s.example.com"
      kind      = "IngressParameters"
      name      = "internal-lb"
    }
  }
}
