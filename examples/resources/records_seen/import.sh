# The id is the estate read; the next apply records the versions read then.
terraform import records_seen.network network
