terraform import kubernetes_deployment_v1.web shop/web
