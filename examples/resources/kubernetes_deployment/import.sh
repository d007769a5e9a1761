terraform import kubernetes_deployment.web shop/web
