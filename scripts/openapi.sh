#!/usr/bin/env bash
# Refreshes reference/openapi/ (the API server's OpenAPI v3, one file per GA group-version),
# reference/discovery.tsv and reference/feature-gates.tsv from the cluster KUBECONFIG names. The
# checked-in copies are a kube-apiserver v1.36's; `make catalog` joins them with hashicorp's
# schema into provider-live/catalog/kinds.tsv. kube-test-server's schema follows with
# `cargo run -p kube-test-server --bin openapi_extract -- reference/openapi/*.json`.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${KUBECONFIG:?set KUBECONFIG to the cluster whose OpenAPI to record}"
kubectl=$(command -v kubectl || echo .tools/bin/kubectl)
# Every GA group-version the server serves (its OpenAPI v3 index), one file each.
paths=$("$kubectl" get --raw /openapi/v3 | python3 -c '
import json, re, sys
for path in sorted(json.load(sys.stdin)["paths"]):
    if re.fullmatch(r"api/v1|apis/[^/]+/v[0-9]+", path):
        print(path)
')
rm -f reference/openapi/*.json
for path in $paths; do
    name=$(echo "$path" | sed 's|^api/v1$|core_v1|; s|^apis/||; s|/|_|g')
    "$kubectl" get --raw "/openapi/v3/$path" | python3 -m json.tool --sort-keys --indent 1 > "reference/openapi/$name.json"
    echo "reference/openapi/$name.json"
done

# The server's discovery of those group-versions: every kind it serves, with its verbs. `make
# catalog` accounts for each GA kind it can create (new_types.tsv, beyond.tsv).
{
    echo "# The API server's discovery: api_version, kind, plural, scope, verbs of every resource of"
    echo "# its GA group-versions, as scripts/openapi.sh recorded them from a kube-apiserver v1.36."
    echo "# Read by \`make catalog\` (kind-catalog/src/kinds.rs)."
    for path in $paths; do
        "$kubectl" get --raw "/$path" | python3 -c '
import json, sys
doc = json.load(sys.stdin)
for r in doc["resources"]:
    if "/" not in r["name"]:
        scope = "namespaced" if r["namespaced"] else "cluster"
        print("\t".join([doc["groupVersion"], r["kind"], r["name"], scope, ",".join(sorted(r["verbs"]))]))
'
    done
} > reference/discovery.tsv
echo reference/discovery.tsv

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
