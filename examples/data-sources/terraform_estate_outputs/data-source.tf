# Reads the outputs estate "network" recorded with records_outputs.
data "terraform_estate_outputs" "network" {
  provider = records
  estate   = "network"
  names    = ["gateway_host", "ports"]

  defaults = {
    ports = [80]
  }
}

locals {
  gateway_host = data.terraform_estate_outputs.network.values.gateway_host
}
