# RuntimeClasses for sandboxed and accelerated container runtimes.

resource "kubernetes_runtime_class_v1" "gvisor" {
  metadata {
    name = "corpus-gvisor"
    labels = {
      sandbox = "true"
    }
  }

  handler = "runsc"
}

resource "kubernetes_runtime_class_v1" "kata" {
  metadata {
    name = "corpus-kata"
  }

  handler = "kata-qemu"
}
