data "kubectl_filename_list" "manifests" {
  pattern = "${path.module}/manifests/*.yaml"
}

resource "kubectl_manifest" "each" {
  for_each  = toset(data.kubectl_filename_list.manifests.matches)
  yaml_body = file(each.value)
}
