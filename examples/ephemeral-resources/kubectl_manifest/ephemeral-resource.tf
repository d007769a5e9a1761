# A value read for this run only: never written to state or plan files.
ephemeral "kubectl_manifest" "bootstrap" {
  api_version = "v1"
  kind        = "Secret"
  name        = "bootstrap-token"
  namespace   = "kube-system"
  fields = {
    token = "data.token"
  }
}
