# A custom resource definition and an object of its kind, in one plan and one apply.
resource "kubectl_manifest" "crd" {
  yaml_body = <<-YAML
    apiVersion: apiextensions.k8s.io/v1
    kind: CustomResourceDefinition
    metadata:
      name: crontabs.stable.example.com
    spec:
      group: stable.example.com
      scope: Namespaced
      names: {kind: CronTab, plural: crontabs, singular: crontab}
      versions:
      - name: v1
        served: true
        storage: true
        schema:
          openAPIV3Schema:
            type: object
            properties:
              spec:
                type: object
                properties:
                  cronSpec: {type: string}
  YAML
}

resource "kubectl_manifest" "nightly" {
  depends_on = [kubectl_manifest.crd]

  yaml_body = <<-YAML
    apiVersion: stable.example.com/v1
    kind: CronTab
    metadata:
      name: nightly
      namespace: shop
    spec:
      cronSpec: "0 3 * * *"
  YAML
}

# A Deployment: the apply waits for its rollout and for a condition.
resource "kubectl_manifest" "web" {
  yaml_body = <<-YAML
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: web
      namespace: shop
    spec:
      replicas: 2
      selector:
        matchLabels: {app: web}
      template:
        metadata:
          labels: {app: web}
        spec:
          containers:
          - name: web
            image: nginx:1.27
  YAML

  wait_for {
    condition {
      type   = "Available"
      status = "True"
    }
  }
}
