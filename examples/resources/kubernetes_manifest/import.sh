terraform import kubernetes_manifest.web_pdb "apiVersion=policy/v1,kind=PodDisruptionBudget,namespace=shop,name=web"
