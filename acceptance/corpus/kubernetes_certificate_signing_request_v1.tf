# A CertificateSigningRequest for a client certificate from the
# kube-apiserver-client signer, with usages and an expiry, left for an
# administrator to approve (auto_approve = false).

resource "kubernetes_certificate_signing_request_v1" "client" {
  metadata {
    name = "corpus-csr"
    labels = {
      "app.kubernetes.io/part-of" = "corpus"
    }
  }

  spec {
    signer_name        = "kubernetes.io/kube-apiserver-client"
    expiration_seconds = 86400
    usages             = ["client auth", "digital signature"]

    request = <<-EOT
    -----BEGIN CERTIFICATE REQUEST-----
    MIHLMHMCAQAwETEPMA0GA1UEAwwGY29ycHVzMFkwEwYHKoZIzj0CAQYIKoZIzj0D
    AQcDQgAERDLLn/L+IlcEPSsFfUlU+0tbWyVeS5wZ8xXi+ZZ0XHUajMvi3dYaYe0c
    Am3+kPPy2IQUxTCCBUJIBCajQKWGYaAAMAoGCCqGSM49BAMCA0gAMEUCIQCDbbh6
    cfWjxXW7ypxbV5jO1jjCqwaQ7ITyyCqEWULRSAIgNDzP6Rzm3tOJPI6/xgSdYeSr
    eNaGmdL2++9YH+oo4JY=
    -----END CERTIFICATE REQUEST-----
    EOT
  }

  auto_approve = false
}
