terraform import kubernetes_config_map.app shop/app-config
