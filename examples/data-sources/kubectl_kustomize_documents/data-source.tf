# Not served: this provider has no kustomize, and a read of kubectl_kustomize_documents says
# so. Render with `kustomize build overlays/prod > rendered.yaml` and read the result with
# kubectl_file_documents instead, e.g. `content = file("rendered.yaml")`.
data "kubectl_file_documents" "rendered" {
  content = <<-YAML
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: rendered
  YAML
}
