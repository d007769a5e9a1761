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

variable "image" {
  description = "Container image of the web Deployment."
  type        = string
  default     = "nginxinc/nginx-unprivileged:1.27-alpine"
}

variable "shard_count" {
  description = "How many shard ConfigMaps (shard-0 .. shard-N-1)."
  type        = number
  default     = 2
}

variable "log_level" {
  description = "Log level handed to the web containers through app-config."
  type        = string
  default     = "info"
}

variable "wait_for_rollout" {
  description = "Wait for the Deployment's rollout after create and update. Turn off on clusters without nodes."
  type        = bool
  default     = true
}
