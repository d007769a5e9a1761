# A token request cannot be imported: the API server keeps no token to read back.
# Apply the configuration to request a new one.
