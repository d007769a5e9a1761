#!/usr/bin/env bash
# make break-check: shows that every stage's assertions carry weight. For each stage N it runs
# the stage suite with BREAK_STAGE=N (stage N breaks its own setup or expectation on purpose and
# the run ends after it) and checks that stages 1..N-1 pass and stage N fails.
# Usage: scripts/break-check.sh [N ...]   (default: all 13 stages)
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
logs="$root/.work/break-check"
mkdir -p "$logs"
cd "$root"

stages=("$@")
[[ ${#stages[@]} -gt 0 ]] || stages=($(seq 1 13))

cargo test --release --quiet -p acceptance --test suites --no-run || { echo "break-check: the acceptance suites do not build" >&2; exit 1; }

started=$SECONDS
failing=0
for n in "${stages[@]}"; do
    log="$logs/stage-$n.log"
    BREAK_STAGE=$n cargo test --release --quiet -p acceptance --test suites -- stages:: --nocapture >"$log" 2>&1
    code=$?
    earlier_failed="$(grep -E '^stage [0-9]+ .*: FAILED' "$log" | grep -vE "^stage $n " || true)"
    if [[ $code -ne 0 ]] && grep -qE "^stage $n .*: FAILED" "$log" && [[ -z "$earlier_failed" ]]; then
        failing=$((failing + 1))
        echo "stage $n: fails when broken ($(grep -A1 -E "^stage $n .*: FAILED" "$log" | tail -n1 | sed 's/^ *//' | cut -c1-110))"
    elif [[ -n "$earlier_failed" ]]; then
        echo "stage $n: INCONCLUSIVE, an earlier stage failed: $earlier_failed (log: $log)"
    else
        echo "stage $n: still PASSES when broken (log: $log)"
    fi
done
echo "break-check: $failing of ${#stages[@]} stages fail when broken ($((SECONDS - started)) s)"
[[ $failing -eq ${#stages[@]} ]]
