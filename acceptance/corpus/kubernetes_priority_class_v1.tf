# PriorityClasses: a high priority for critical services, and a low one for
# batch work that never preempts other pods.

resource "kubernetes_priority_class_v1" "critical" {
  metadata {
    name = "corpus-critical"
    labels = {
      tier = "critical"
    }
  }

  value             = 1000000
  global_default    = false
  description       = "Critical user-facing services."
  preemption_policy = "PreemptLowerPriority"
}

resource "kubernetes_priority_class_v1" "batch" {
  metadata {
    name = "corpus-batch"
  }

  value             = -10
  description       = "Best-effort batch jobs; never preempts."
  preemption_policy = "Never"
}
