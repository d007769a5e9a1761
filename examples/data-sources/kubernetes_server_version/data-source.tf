# Reads the API server's version.
data "kubernetes_server_version" "current" {}

output "kubernetes_version" {
  value = data.kubernetes_server_version.current.version
}
