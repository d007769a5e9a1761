# Reads the outputs estate "network" recorded with records_outputs.
data "terraform_estate_outputs" "network" {
  provider = records
  estate   = "network"
  names    = ["gateway_host", "ports"]

  defaults = {
    ports = [80]
  }

  # Fail the read unless network has applied serial 3 or later, and changed these outputs
  # within the last week. `serial = 3` would read them exactly as serial 3 recorded them.
  min_serial = 3
  max_age    = "168h"
}

locals {
  gateway_host = data.terraform_estate_outputs.network.values.gateway_host
  # When and in which apply gateway_host was recorded.
  gateway_serial = data.terraform_estate_outputs.network.versions.gateway_host.serial
  gateway_as_of  = data.terraform_estate_outputs.network.versions.gateway_host.as_of
}
