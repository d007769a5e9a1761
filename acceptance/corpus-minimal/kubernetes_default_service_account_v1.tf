resource "kubernetes_default_service_account_v1" "min" {
  metadata {}
}
