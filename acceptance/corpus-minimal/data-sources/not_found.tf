# A read of every hashicorp/kubernetes data source naming an object that does not exist
# (${suffix} is the test run's), one block per data source, blocks apart by a blank line.
# The cluster's namespaces and version cannot be missing: those two read as ever.

data "kubernetes_config_map" "missing" {
  metadata {
    name = "min-none-${suffix}"
  }
}

data "kubernetes_config_map_v1" "missing" {
  metadata {
    name = "min-none-${suffix}"
  }
}

data "kubernetes_endpoint_slice_v1" "missing" {
  metadata {
    name = "min-none-${suffix}"
  }
}

data "kubernetes_endpoints_v1" "missing" {
  metadata {
    name = "min-none-${suffix}"
  }
}

data "kubernetes_ingress" "missing" {
  metadata {
    name = "min-none-${suffix}"
  }
}

data "kubernetes_ingress_v1" "missing" {
  metadata {
    name = "min-none-${suffix}"
  }
}

data "kubernetes_mutating_webhook_configuration_v1" "missing" {
  metadata {
    name = "min-none-${suffix}"
  }
}

data "kubernetes_namespace" "missing" {
  metadata {
    name = "min-none-${suffix}"
  }
}

data "kubernetes_namespace_v1" "missing" {
  metadata {
    name = "min-none-${suffix}"
  }
}

data "kubernetes_persistent_volume_claim" "missing" {
  metadata {
    name = "min-none-${suffix}"
  }
}

data "kubernetes_persistent_volume_claim_v1" "missing" {
  metadata {
    name = "min-none-${suffix}"
  }
}

data "kubernetes_persistent_volume_v1" "missing" {
  metadata {
    name = "min-none-${suffix}"
  }
}

data "kubernetes_pod" "missing" {
  metadata {
    name = "min-none-${suffix}"
  }
}

data "kubernetes_pod_v1" "missing" {
  metadata {
    name = "min-none-${suffix}"
  }
}

data "kubernetes_secret" "missing" {
  metadata {
    name = "min-none-${suffix}"
  }
}

data "kubernetes_secret_v1" "missing" {
  metadata {
    name = "min-none-${suffix}"
  }
}

data "kubernetes_service" "missing" {
  metadata {
    name = "min-none-${suffix}"
  }
}

data "kubernetes_service_account" "missing" {
  metadata {
    name = "min-none-${suffix}"
  }
}

data "kubernetes_service_account_v1" "missing" {
  metadata {
    name = "min-none-${suffix}"
  }
}

data "kubernetes_service_v1" "missing" {
  metadata {
    name = "min-none-${suffix}"
  }
}

data "kubernetes_storage_class" "missing" {
  metadata {
    name = "min-none-${suffix}"
  }
}

data "kubernetes_storage_class_v1" "missing" {
  metadata {
    name = "min-none-${suffix}"
  }
}

data "kubernetes_all_namespaces" "missing" {}

data "kubernetes_server_version" "missing" {}

data "kubernetes_nodes" "missing" {
  metadata {
    labels = {
      "minimal.example.com/none" = "${suffix}"
    }
  }
}

data "kubernetes_resource" "missing" {
  api_version = "v1"
  kind        = "ConfigMap"
  metadata {
    name = "min-none-${suffix}"
  }
}

data "kubernetes_resources" "missing" {
  api_version    = "v1"
  kind           = "ConfigMap"
  label_selector = "minimal.example.com/none=${suffix}"
}
