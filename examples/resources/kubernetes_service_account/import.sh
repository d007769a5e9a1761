terraform import kubernetes_service_account.app shop/app
