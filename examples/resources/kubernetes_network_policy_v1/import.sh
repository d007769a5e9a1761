terraform import kubernetes_network_policy_v1.web shop/web-ingress
