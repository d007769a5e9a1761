resource "kubernetes_certificate_signing_request_v1" "min" {
  metadata {
    name = "min-csr-${var.suffix}"
  }
  spec {
    signer_name = "kubernetes.io/kube-apiserver-client"
    # The signer refuses a client certificate request without "client auth".
    usages  = ["client auth"]
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
}
