terraform import kubernetes_namespace.shop shop
