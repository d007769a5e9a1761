#!/usr/bin/env bash
# `make test`'s last step: every test of the workspace (unit, protocol, and acceptance with the
# real engine and the release providers from dist/mirror), then one summary line over all of them.
# Arguments replace `--workspace` to run a part, e.g. `scripts/test.sh -p acceptance --test stages`.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT

# The acceptance tests find the engine and kubectl in .tools/bin (make setup).
selection=("$@")
[[ ${#selection[@]} -gt 0 ]] || selection=(--workspace)
status=0
cargo test "${selection[@]}" --no-fail-fast 2>&1 | tee "$log" || status=$?

# cargo prints "test result: ok. 12 passed; 0 failed; 3 ignored; ..." once per test binary.
read -r passed failed ignored < <(
    sed -n 's/^test result: [A-Za-z]*\. \([0-9]*\) passed; \([0-9]*\) failed; \([0-9]*\) ignored.*/\1 \2 \3/p' "$log" |
        awk '{p+=$1; f+=$2; i+=$3} END {print p+0, f+0, i+0}'
)
# A test that skips itself at run time (acceptance::Cluster::requires_running_pods) passes as far
# as cargo knows; it prints `SKIP: <test>: <reason>` on the terminal, and counts as skipped here.
skipped="$(grep -c '^SKIP: ' "$log" || true)"
echo
echo "================================================================"
grep -E '^     Running |^   Doc-tests |^test result: ' "$log" | sed 's/^ *//' || true
grep -E '^SKIP: ' "$log" || true
echo "----------------------------------------------------------------"
if [[ "$status" -ne 0 && "$failed" -eq 0 ]]; then
    echo "cargo test failed before all tests ran (exit $status): see the output above"
fi
echo "summary: $((passed - skipped)) passed, $failed failed, $((ignored + skipped)) skipped"
exit "$status"
