terraform {
  required_version = ">= 1.6"

  required_providers {
    # Local name `kubernetes`, so resources keep hashicorp/kubernetes names and attributes.
    kubernetes = {
      source  = "choudoufu/live"
      version = ">= 0.1.0"
    }
    records = {
      source  = "choudoufu/records"
      version = ">= 0.1.0"
    }
  }

  # State stays in the working directory. To keep it in the cluster instead:
  #   backend "kubernetes" {
  #     secret_suffix = "app"
  #     namespace     = "kube-system"
  #   }
}
