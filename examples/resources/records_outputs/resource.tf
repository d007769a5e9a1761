# Records this estate's outputs (in namespace tofu-records-<estate>) for other estates.
resource "records_outputs" "this" {
  values = {
    gateway_host = "gateway.network.svc.cluster.local"
    ports        = [80, 443]
  }

  sensitive_values = {
    gateway_token = "example-token"
  }

  # Who may read them: a Role with `get` on exactly these Secrets, and its RoleBinding.
  # `outputs` limits a reader to some outputs: its Role lists their Secrets only.
  readers = [
    { kind = "User", name = "app-planner" },
    { kind = "ServiceAccount", name = "ci", namespace = "tools", outputs = ["gateway_host"] },
  ]

  # Each output keeps its last 10 values (serial and apply time of each) for pinned reads.
  history = 10
}
