# Decodes one YAML manifest into an object, e.g. to hand it to kubernetes_manifest.
resource "kubernetes_manifest" "settings" {
  manifest = provider::kubernetes::manifest_decode(<<-EOT
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: settings
      namespace: shop
    data:
      port: "8080"
    EOT
  )
}
