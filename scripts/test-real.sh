#!/usr/bin/env bash
# make test-real: the acceptance tests, unchanged, against a real kube-apiserver and
# kube-controller-manager (v1.36) from ../shared/realk8s, started here on free ports in a state
# folder of its own under .work/test-real/ and stopped again however the run ends. The tests
# reach it through KUBECONFIG, KUBECONFIG_APP_PLANNER and KUBECONFIG_RESTRICTED, as any cluster.
# Ends with scripts/test.sh's `summary: N passed (W of them waits), N failed, N skipped`: that
# cluster runs Pods on simulated nodes, so every test runs, the waits too.
#
# Without ../shared/realk8s it says so and exits 0: a fresh clone's `make test` never needs it.
# Expects `make setup build` done (the Makefile's `test-real` target runs them first).
# Usage: scripts/test-real.sh [SUITE ...]   (default: every suite of acceptance/tests/suites/ and
# tools/tests/ using a cluster)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
realk8s="${REALK8S:-$root/../shared/realk8s}"
if [[ ! -x "$realk8s/start" ]]; then
    echo "test-real: no real control plane at $realk8s: lane skipped"
    exit 0
fi
cd "$root"
started=$SECONDS
work="$root/.work/test-real"
mkdir -p "$work"

# Two free port pairs: the apiserver's (the controller manager listens on it + 4014) and etcd's
# (client, peer = client + 1). Ports are checked by binding them.
read -r api_port etcd_port < <(python3 - <<'PY'
import random, socket

def free(port):
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False

def pick(offset, taken):
    for _ in range(500):
        port = random.randint(20000, 40000)
        pair = {port, port + offset}
        if not pair & taken and all(free(p) for p in pair):
            return port
    raise SystemExit("test-real: no free ports")

api = pick(4014, set())
print(api, pick(1, {api, api + 4014}))
PY
)

cluster="$(mktemp -d "$work/cluster.XXXXXX")"
stop_cluster() {
    local pids
    pids="$(cat "$cluster"/*.pid 2>/dev/null || true)"
    "$realk8s/stop" "$cluster" >/dev/null 2>&1 || true
    # `stop` does not wait, and an apiserver whose etcd went first can hang in its shutdown:
    # whatever of ours still runs after 10 s is killed, then the folder goes.
    local alive
    for _ in $(seq 100); do
        alive=""
        for pid in $pids; do kill -0 "$pid" 2>/dev/null && alive+=" $pid"; done
        [[ -z "$alive" ]] && break
        sleep 0.1
    done
    for pid in $alive; do kill -KILL "$pid" 2>/dev/null || true; done
    rm -rf "$work/log"
    cp -r "$cluster/log" "$work/log" 2>/dev/null || true
    rm -rf "$cluster"
}
trap stop_cluster EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The unpacked binaries are kept between runs (hard links), so `start` need not unpack them again.
mkdir -p "$work/bin" "$cluster/bin"
cp -l "$work/bin"/kube-* "$cluster/bin/" 2>/dev/null || true
echo "test-real: starting the control plane in ${cluster#"$root"/} (apiserver :$api_port, etcd :$etcd_port)"
if ! exports="$(REALK8S_PORT=$api_port REALK8S_ETCD_PORT=$etcd_port "$realk8s/start" "$cluster")"; then
    echo "test-real: the control plane did not start (logs: .work/test-real/log)" >&2
    exit 1
fi
cp -l "$cluster/bin"/kube-* "$work/bin/" 2>/dev/null || true
eval "$exports"
export KUBECONFIG KUBECONFIG_APP_PLANNER KUBECONFIG_RESTRICTED
echo "test-real: up after $((SECONDS - started)) s; KUBECONFIG=$KUBECONFIG"

tests=("$@")
if [[ ${#tests[@]} -eq 0 ]]; then
    for file in $(grep -lE 'Cluster::start|Estates::start' acceptance/tests/suites/*.rs tools/tests/*.rs); do
        tests+=("$(basename "$file" .rs)")
    done
fi
selection=(-p acceptance -p tools)
for t in "${tests[@]}"; do selection+=(--test "$t"); done
status=0
# Four suites at a time, one more than on the test server: they mostly wait on the cluster's
# controllers and deletions (a quarter of a core each, against a third there), and with three
# the real lane went on alone for 60-90 s after `make test` ended in `.ci/run`. The corpus's
# cluster-wide hooks first and alone (scripts/test.sh); a test that counts the API server's
# requests keeps the other suites' commands out meanwhile (acceptance::requests).
TEST_JOBS="${TEST_JOBS:-4}" scripts/test.sh "${selection[@]}" || status=$?
echo "test-real: ${tests[*]} against the real control plane: $((SECONDS - started)) s in all"
exit "$status"
