# Lists the names of every Namespace.
data "kubernetes_all_namespaces" "all" {}

output "has_shop" {
  value = contains(data.kubernetes_all_namespaces.all.namespaces, "shop")
}
