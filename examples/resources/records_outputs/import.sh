# The id is the estate of the provider block.
terraform import records_outputs.this network
