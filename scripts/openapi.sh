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

# The server's feature gates (its kubernetes_feature_enabled metric): `make catalog` leaves out the
# fields behind a gate that is off.
{
    echo "# The API server's feature gates: name, stage, whether on (its kubernetes_feature_enabled"
    echo "# metric), as scripts/openapi.sh recorded them from a kube-apiserver v1.36 with its default"
    echo "# gates. Read by \`make catalog\` (kind-catalog/src/beyond.rs)."
    "$kubectl" get --raw /metrics | python3 -c '
import re, sys
rows = []
for line in sys.stdin:
    m = re.match(r"kubernetes_feature_enabled\{name=\"([^\"]+)\",stage=\"([^\"]*)\"\} (\d)", line)
    if m:
        rows.append("\t".join([m[1], m[2] or "GA", "true" if m[3] == "1" else "false"]))
print("\n".join(sorted(rows)))
'
} > reference/feature-gates.tsv
echo reference/feature-gates.tsv
