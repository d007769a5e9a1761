terraform import kubernetes_service.web shop/web
