# A short-lived token of the ServiceAccount shop/deployer, for a second provider block that
# acts as that account. The token is asked for in each run and never written to a plan or
# state.
ephemeral "kubernetes_token_request_v1" "deployer" {
  metadata {
    name      = "deployer"
    namespace = "shop"
  }
  spec {
    audiences          = ["https://kubernetes.default.svc"]
    expiration_seconds = 600
  }
}

provider "kubernetes" {
  alias  = "deployer"
  estate = "example"
  host   = "https://cluster.example.com:6443"
  token  = ephemeral.kubernetes_token_request_v1.deployer.token
}
