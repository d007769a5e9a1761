variable "kubeconfig" {
  description = "Path to the kubeconfig of the cluster. Null: KUBE_CONFIG_PATH, then KUBECONFIG, then ~/.kube/config."
  type        = string
  default     = null
}

variable "kube_context" {
  description = "Context in the kubeconfig. Null: the kubeconfig's current context."
  type        = string
  default     = null
}

variable "cluster_domain" {
  description = "DNS domain of the cluster's Services."
  type        = string
  default     = "cluster.local"
}

variable "consumer_namespace" {
  description = "The one namespace whose pods may reach the platform namespace."
  type        = string
  default     = "shop"
}
