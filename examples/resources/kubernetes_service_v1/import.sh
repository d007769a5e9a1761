terraform import kubernetes_service_v1.web shop/web
