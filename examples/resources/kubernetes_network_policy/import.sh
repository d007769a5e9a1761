terraform import kubernetes_network_policy.web shop/web-ingress
