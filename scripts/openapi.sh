#!/usr/bin/env bash
# Refreshes reference/openapi/ (the API server's OpenAPI v3, one file per group-version) from
# the cluster KUBECONFIG names. The checked-in copy is a kube-apiserver v1.36's; `make catalog`
# joins it with hashicorp's schema into provider-live/catalog/kinds.tsv.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${KUBECONFIG:?set KUBECONFIG to the cluster whose OpenAPI to record}"
kubectl=$(command -v kubectl || echo .tools/bin/kubectl)
for path in api/v1 apis/admissionregistration.k8s.io/v1 apis/apiregistration.k8s.io/v1 apis/apps/v1 \
    apis/authentication.k8s.io/v1 apis/authorization.k8s.io/v1 apis/coordination.k8s.io/v1 apis/autoscaling/v1 apis/autoscaling/v2 apis/batch/v1 \
    apis/certificates.k8s.io/v1 apis/discovery.k8s.io/v1 apis/networking.k8s.io/v1 apis/node.k8s.io/v1 \
    apis/policy/v1 apis/rbac.authorization.k8s.io/v1 apis/scheduling.k8s.io/v1 apis/storage.k8s.io/v1; do
    name=$(echo "$path" | sed 's|^api/v1$|core_v1|; s|^apis/||; s|/|_|g')
    "$kubectl" get --raw "/openapi/v3/$path" | python3 -m json.tool --sort-keys --indent 1 > "reference/openapi/$name.json"
    echo "reference/openapi/$name.json"
done
