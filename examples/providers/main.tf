# The smallest configuration that uses both providers: the declarations and provider blocks to
# copy into an existing configuration, and one resource of each. `terraform init` installs the
# providers (from the project's mirror with TF_CLI_CONFIG_FILE=dist/terraformrc); `terraform
# validate` checks the provider blocks of the providers that resources use.

terraform {
  required_providers {
    # The local name `kubernetes` keeps hashicorp/kubernetes resource types
    # (kubernetes_config_map, ...) working unchanged.
    kubernetes = {
      source  = "choudoufu/live"
      version = "~> 0.1"
    }
    records = {
      source  = "choudoufu/records"
      version = "~> 0.1"
    }
  }
}

# Every object this provider creates, adopts or updates is labelled tofu-estate=example.
# Connection settings are those of hashicorp/kubernetes (config_path, host, token, ...);
# without any, KUBECONFIG or ~/.kube/config is used.
provider "kubernetes" {
  estate = "example"
}

# This estate's root outputs are recorded in the cluster, in namespace tofu-records-example.
provider "records" {
  estate = "example"
}

resource "kubernetes_config_map" "example" {
  metadata {
    name      = "example"
    namespace = "default"
  }
  data = {
    greeting = "hello"
  }
}

# Records this estate's outputs for other estates, which read them with
# data "terraform_estate_outputs" naming the estate "example".
resource "records_outputs" "this" {
  values = {
    config_map = kubernetes_config_map.example.metadata[0].name
  }
}
