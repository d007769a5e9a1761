resource "kubernetes_certificate_signing_request" "min" {
  metadata {
    name = "min-csrl-${var.suffix}"
  }
  spec {
    # certificates/v1 (v1beta1 is gone) requires a signer, and it refuses a client
    # certificate request without "client auth".
    signer_name = "kubernetes.io/kube-apiserver-client"
    usages      = ["client auth"]
    request     = <<-EOT
    -----BEGIN CERTIFICATE REQUEST-----
    MIHSMHoCAQAwGDEWMBQGA1UEAwwNY29ycHVzLWxlZ2FjeTBZMBMGByqGSM49AgEG
    CCqGSM49AwEHA0IABIADE9PcCJz4ifCPd8ciNMKlX8hv/yChM6HkptR/56jX3WFk
    mNZcAYCRNtKH93cibdbvSw5K4LJTSDnGD5hQU4qgADAKBggqhkjOPQQDAgNIADBF
    AiEAi1EsT1ZESUpkIww2arar0BrA2Or4ujTxkPKM26AsJggCIGd6PkAp4Ufi61lJ
    U1FC4sWlY8ypQe13dB52LJMCZjon
    -----END CERTIFICATE REQUEST-----
    EOT
  }
}
