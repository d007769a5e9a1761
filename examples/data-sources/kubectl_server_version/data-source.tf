data "kubectl_server_version" "current" {}

output "cluster_version" {
  value = data.kubectl_server_version.current.version
}
