# Decodes YAML text of several manifests (separated by `---`) into a tuple of objects: here one
# kubernetes_manifest per object, keyed by kind and name.
locals {
  manifests = provider::kubernetes::manifest_decode_multi(<<-EOT
    apiVersion: v1
    kind: ServiceAccount
    metadata:
      name: web
      namespace: shop
    ---
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: web
      namespace: shop
    data:
      port: "8080"
    EOT
  )
}

resource "kubernetes_manifest" "web" {
  for_each = { for m in local.manifests : "${m.kind}/${m.metadata.name}" => m }
  manifest = each.value
}
