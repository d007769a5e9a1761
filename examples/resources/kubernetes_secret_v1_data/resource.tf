# A key of a Secret another tool manages, in plain text here (stored base64-encoded, shown
# as sensitive): its other keys stay theirs.
resource "kubernetes_secret_v1_data" "example" {
  metadata {
    name      = "my-secret"
    namespace = "default"
  }
  data = {
    "api-key" = var.api_key
  }
}

variable "api_key" {
  type      = string
  sensitive = true
}
