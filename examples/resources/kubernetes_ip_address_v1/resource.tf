# A cluster IP held for a Service by name: the object's name is the address.
resource "kubernetes_ip_address_v1" "reserved" {
  metadata {
    name = "10.112.0.10"
  }
  spec {
    parent_ref {
      resource  = "services"
      namespace = "default"
      name      = "gateway"
    }
  }
}
