terraform import kubernetes_secret.db shop/db-credentials
