# Reads estate "network"'s outputs, refusing any recorded more than a day ago.
data "terraform_estate_outputs" "network" {
  provider = records
  estate   = "network"
  names    = ["gateway_host"]
  max_age  = "24h"
}

# Remembers the versions this estate applied with: when "network" changes gateway_host, the
# next plan here warns "Outputs of estate "network" changed since this estate's last apply:
# "gateway_host"" and shows this resource updated in place.
resource "records_seen" "network" {
  estate   = "network"
  versions = data.terraform_estate_outputs.network.versions

  lifecycle {
    precondition {
      condition     = data.terraform_estate_outputs.network.versions.gateway_host.serial >= 3
      error_message = "Estate network must have applied serial 3 (the new gateway) first."
    }
  }
}
