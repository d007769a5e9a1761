# Read again at every refresh; a change of `triggers` replaces it.
resource "kubectl_server_version" "current" {
  triggers = {
    cluster = "prod-eu"
  }
}
