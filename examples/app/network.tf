# What the platform team's estate recorded at its last apply. Reading it needs `get` on
# network's output Secrets only, not network's state.
data "terraform_estate_outputs" "network" {
  provider = records
  estate   = "network"
  names    = ["gateway_host", "namespace"]
}

locals {
  gateway_host       = data.terraform_estate_outputs.network.values.gateway_host
  platform_namespace = data.terraform_estate_outputs.network.values.namespace
}
