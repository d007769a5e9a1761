# A client certificate from the kube-apiserver-client signer for a PEM certificate request
# (var.client_csr) of the private key var.client_key, for a second provider block that authenticates with it. The request is approved, its certificate
# returned and the request deleted again; the certificate is never written to a plan or state.
ephemeral "kubernetes_certificate_signing_request_v1" "client" {
  metadata {
    name = "deployer-client"
  }
  spec {
    request            = var.client_csr
    signer_name        = "kubernetes.io/kube-apiserver-client"
    usages             = ["client auth"]
    expiration_seconds = 3600
  }
}

provider "kubernetes" {
  alias              = "client"
  estate             = "example"
  host               = "https://cluster.example.com:6443"
  client_certificate = ephemeral.kubernetes_certificate_signing_request_v1.client.certificate
  client_key         = var.client_key
}

variable "client_csr" {
  type = string
}

variable "client_key" {
  type      = string
  sensitive = true
}
