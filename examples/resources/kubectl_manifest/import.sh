# apiVersion//kind//name//namespace (namespace left out for a cluster-scoped kind)
terraform import kubectl_manifest.web apps/v1//Deployment//web//shop
