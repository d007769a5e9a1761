#!/usr/bin/env bash
# make demo: the reference estates end to end. Applies examples/network then examples/app with
# the engine and the providers from the mirror, shows what they made (every object with its
# estate label, network's recorded outputs, the Deployment's GATEWAY_HOST), then destroys app
# then network.
#
# The cluster: the one KUBECONFIG names, else the in-memory test server started here.
# Expects `make setup build` done (the Makefile's `demo` target runs them first).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$root/.work/demo"
target="${CARGO_TARGET_DIR:-$root/target}"
[[ "$target" = /* ]] || target="$root/$target"
tool() { if [[ -x "$root/.tools/bin/$1" ]]; then echo "$root/.tools/bin/$1"; else echo "$1"; fi; }
# The engine: ENGINE (or its older name TF), else the Terraform `make setup` installed.
tf="${ENGINE:-${TF:-$(tool terraform)}}"
tf_name="$(basename "$tf")"
kubectl="$(tool kubectl)"

export TF_CLI_CONFIG_FILE="$root/dist/terraformrc"
export TF_IN_AUTOMATION=1 TF_INPUT=0
# TF_VAR_wait_for_rollout=false skips the Deployment's rollout wait (clusters without nodes).

started=$SECONDS
step() { printf '\n\033[1m==> [%3ss] %s\033[0m\n' "$((SECONDS - started))" "$*"; }
fail() { echo "demo: $*" >&2; exit 1; }

[[ -f "$TF_CLI_CONFIG_FILE" ]] || fail "$TF_CLI_CONFIG_FILE is missing: run \`make build\` first"

rm -rf "$work"
mkdir -p "$work"

server_pid=""
stop_server() { [[ -z "$server_pid" ]] || kill "$server_pid" 2>/dev/null || true; }
trap stop_server EXIT

if [[ -n "${KUBECONFIG:-}" ]]; then
    step "Using the cluster of KUBECONFIG=$KUBECONFIG"
else
    step "Starting the in-memory Kubernetes API server (no KUBECONFIG given)"
    server="$target/release/kube-test-server"
    [[ -x "$server" ]] || fail "$server is missing: run \`make build\` first"
    "$server" --port 0 --kubeconfig "$work/kubeconfig" >"$work/server.log" 2>&1 &
    server_pid=$!
    for _ in $(seq 100); do
        [[ -s "$work/kubeconfig" ]] && "$kubectl" --kubeconfig "$work/kubeconfig" get namespaces >/dev/null 2>&1 && break
        kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.log" >&2; fail "the test server exited"; }
        sleep 0.1
    done
    export KUBECONFIG="$work/kubeconfig"
    echo "test server pid $server_pid, kubeconfig $KUBECONFIG"
fi
"$kubectl" version 2>/dev/null | sed 's/^/  /' || true
engine_version="$("$tf" version 2>/dev/null)"
echo "  engine: ${engine_version%%$'\n'*} ($tf)"

# Runs the engine in an estate's folder; shows only the progress lines, all of it on failure.
engine() {
    local estate="$1"
    shift
    local log="$work/$estate-$1.log"
    if ! "$tf" -chdir="$work/$estate" "$@" -no-color >"$log" 2>&1; then
        cat "$log" >&2
        fail "$tf_name $* failed in $estate (log: $log)"
    fi
    grep -E '(Creating|Creation complete|Destroying|Destruction complete|Reading|Read complete|complete!|Warning:|Installed )' \
        "$log" | sed 's/^/  /' || true
}

for estate in network app; do
    mkdir -p "$work/$estate"
    cp "$root/examples/$estate"/*.tf "$work/$estate/"
    # The packages' hashes, locked as a team's committed lock file locks them: `init` from the
    # mirror then verifies against them instead of warning of an incomplete lock file.
    cp "$root/dist/providers.lock.hcl" "$work/$estate/.terraform.lock.hcl"
    step "$tf_name init ($estate): providers from the mirror"
    engine "$estate" init -input=false
done

step "$tf_name apply (network)"
engine network apply -auto-approve
step "$tf_name apply (app): reads network's recorded outputs"
engine app apply -auto-approve

step "network's objects (namespace platform), with their estate label"
"$kubectl" get namespaces platform shop -L tofu-estate
"$kubectl" get networkpolicies,services,configmaps -n platform -L tofu-estate
step "app's objects (namespace shop, and the handoff ConfigMap in platform)"
"$kubectl" get configmaps,serviceaccounts,services,deployments,horizontalpodautoscalers -n shop -L tofu-estate
"$kubectl" get configmap handoff -n platform -L tofu-estate

step "network's outputs, recorded as Secrets in tofu-records-network"
"$kubectl" get secrets -n tofu-records-network -L tofu-estate
"$kubectl" get secrets -n tofu-records-network \
    -o go-template='{{range .items}}  {{.metadata.name}}:{{range $k, $v := .data}}  {{$k}} {{$v | base64decode}}{{end}}{{"\n"}}{{end}}'
echo "  $tf_name output (network):"
"$tf" -chdir="$work/network" output -no-color | sed 's/^/    /'

step "The Deployment web's GATEWAY_HOST (from network's outputs)"
host="$("$kubectl" get deployment web -n shop \
    -o jsonpath='{.spec.template.spec.containers[0].env[?(@.name=="GATEWAY_HOST")].value}')"
echo "  GATEWAY_HOST=$host"
[[ "$host" == "gateway.platform.svc.cluster.local" ]] || fail "unexpected GATEWAY_HOST '$host'"

step "$tf_name destroy (app first: network stays)"
engine app destroy -auto-approve
step "$tf_name destroy (network)"
engine network destroy -auto-approve
left="$("$kubectl" get namespaces,configmaps,secrets,services,serviceaccounts,deployments,networkpolicies \
    -A -l tofu-estate -o name 2>/dev/null || true)"
[[ -z "$left" ]] || fail "objects still carry tofu-estate: $left"
echo "  nothing carries tofu-estate any more"

step "Done in $((SECONDS - started)) s"
