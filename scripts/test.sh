#!/usr/bin/env bash
# `make test`'s last step: every test of the workspace (unit, protocol, and acceptance with the
# real engine and the release providers from dist/mirror), then one summary line over all of them.
# Arguments replace `--workspace` to run a part, e.g. `scripts/test.sh -p acceptance --test stages`:
# an acceptance suite is named as its module of acceptance/tests/suites/.
#
# Cargo runs test binaries one after the other; most of ours wait on the engine and an API
# server, so this script builds them with cargo, then runs TEST_JOBS of them at a time (default
# 3), each in its package's folder as cargo would, and prints each one's output whole when it
# ends. The acceptance suites are one binary (one link), run as one process per suite (its
# module), so each suite's time shows; the slowest start first (their times from the last run,
# kept in target/test-times.tsv, else SLOW_FIRST below).
# Integration tests, suites or single tests of a suite (`suite::test`) named in TEST_ALONE run
# first, each with nothing beside it. On a real cluster (`KUBECONFIG` set, as in
# `make test-real`) that is the corpus's life of its cluster-wide hooks unless said otherwise:
# the suites share the cluster, and its admission webhooks and APIService, which no server
# backs, hold up the other suites' namespace deletions while they exist. The rest of the corpus
# runs beside the other suites.
set -euo pipefail
if [[ -z "${TEST_ALONE+set}" && -n "${KUBECONFIG:-}" ]]; then
    export TEST_ALONE=corpus::the_cluster_wide_hooks_apply_plan_empty_import_recreate_update_and_destroy
fi

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
jobs="${TEST_JOBS:-3}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# The acceptance tests find the engine and kubectl in .tools/bin (make setup).
# `--test NAME` of a suite becomes `--test suites` and that suite.
selection=()
suites=()
while [[ $# -gt 0 ]]; do
    if [[ "$1" == --test && -f "acceptance/tests/suites/${2:-}.rs" ]]; then
        suites+=("$2")
        [[ " ${selection[*]} " == *" --test suites "* ]] || selection+=(--test suites)
        shift 2
    else
        selection+=("$1")
        shift
    fi
done
[[ ${#selection[@]} -gt 0 ]] || selection=(--workspace)
export SUITES="${suites[*]}"
# Suites started first on a fresh checkout, slowest first (a run's own times replace this).
export SLOW_FIRST="corpus stages flaky_api patch_resources kubectl live_resources workload minimal
    compaction hashicorp_corpus_states waits manifest_wait live_behaviour neighbours"
# One record per lane: the test server and a real cluster take different times.
times="${CARGO_TARGET_DIR:-$root/target}/test-times${KUBECONFIG:+-real}.tsv"
export TIMES="$times"

# The engine and kubectl are Go programs run thousands of times, a second or two each; on the
# corpus's plans garbage collection is a third of the engine's CPU. Collecting at 400 % heap
# growth instead of 100 % cut the suites' CPU by 7-11 % (corpus 81 -> 72 s, live_resources 45 ->
# 41 s), for memory the machine has.
export GOGC="${GOGC:-400}"
# One processor each for the same Go programs: at most three tests of a lane run at once beside
# the other lane, so the machine's cores are busy anyway, and a Go program given both spends
# CPU on idle processors looking for work and on parallel collection. The acceptance lane on the
# test server took 396 s of CPU against 411 s with two.
export GOMAXPROCS="${GOMAXPROCS:-1}"

# The release binaries the tests run, built once for all the test processes
# (acceptance::build); `make test` has built them already, so this is quick.
cargo build-all --quiet
export RELEASE_BINARIES_BUILT=1

# --release: the tests reuse `make build`'s release dependencies and binaries (one compilation).
# The JSON lines name each test executable and its package; diagnostics still go to the terminal.
status=0
cargo test --release "${selection[@]}" --no-run --message-format=json-render-diagnostics \
    >"$work/build.json" || status=$?
if [[ "$status" -ne 0 ]]; then
    echo "cargo test: the tests did not build (exit $status): see the output above"
    exit "$status"
fi
python3 - "$work/build.json" >"$work/binaries" <<'PY'
import json, os, subprocess, sys

# label, package folder, executable, its arguments, alone, record key (separated by 0x1f: a tab
# is whitespace to `read`, which would merge the empty fields): the binaries (or suites) to run alone
# first, then the acceptance tests, slowest first, then the rest.
alone = set(os.environ.get("TEST_ALONE", "").split())
chosen = set(os.environ.get("SUITES", "").split())
slow = os.environ["SLOW_FIRST"].split()
took = {}
if os.path.exists(os.environ["TIMES"]):
    for line in open(os.environ["TIMES"]):
        key, _, seconds = line.rstrip("\n").rpartition("\t")
        took[key] = float(seconds)

def expected(key, name):
    if key in took:
        return took[key]
    return len(slow) - slow.index(name) if name in slow else 0

rows = []
for line in open(sys.argv[1]):
    msg = json.loads(line)
    if msg.get("reason") != "compiler-artifact" or not msg["profile"]["test"]:
        continue
    if not msg.get("executable"):
        continue
    target = msg["target"]
    folder = os.path.dirname(msg["manifest_path"])
    src = os.path.relpath(target["src_path"], folder)
    exe = msg["executable"]
    test = target["kind"] == ["test"]
    kind = "" if test else "unittests "
    units = [(f"{kind}{src}", target["name"], "")]
    if test and os.path.basename(src) == "main.rs" and target["name"] == "suites":
        listed = subprocess.run([exe, "--list", "--format", "terse"], cwd=folder, check=True,
                                capture_output=True, text=True).stdout
        modules = {}
        for entry in listed.splitlines():
            name = entry.rpartition(": ")[0]
            if name:
                # A test named alone is a unit of its own.
                module = name if name in alone else name.split("::")[0]
                modules.setdefault(module, []).append(name)
        units = []
        for m, names in sorted(modules.items()):
            suite, _, test = m.partition("::")
            if not chosen or suite in chosen:
                label = f"{os.path.dirname(src)}/{suite}.rs" + (f"::{test}" if test else "")
                units.append((label, m, "--exact " + " ".join(names)))
    for label, name, args in units:
        key = f"{os.path.relpath(folder)}/{label}"
        solo = test and name in alone
        order = (not solo, not test, -expected(key, name))
        rows.append((order, f"{label} ({os.path.basename(exe)})", folder, exe, args, solo, key))
for _, label, folder, exe, args, solo, key in sorted(rows, key=lambda r: r[0]):
    print("\x1f".join([label, folder, exe, args, 'alone' if solo else '', key]))
PY

# Runs binary number $1 into its own log; the exit code goes beside it. Its wall and CPU time
# (with every process it waited for: the engine, kubectl, in-process test servers) end the log,
# so a run shows where the test time and the machine's CPU go (and target/test-times.tsv takes
# the wall time from that line).
run_one() {
    local i="$1" label="$2" folder="$3" exe="$4" args="$5" rc=0
    local TIMEFORMAT="     Took %1R s, CPU %1U s user + %1S s system"
    {
        echo "     Running $label"
        # shellcheck disable=SC2086 # the arguments are test names, split on purpose
        time { (cd "$folder" && "$exe" $args) </dev/null 2>&1 || rc=$?; }
    } >"$work/$i.log" 2>&1
    echo "$rc" >"$work/$i.rc"
}

i=0
running=0
keys=()
while IFS=$'\x1f' read -r label folder exe args alone key; do
    limit="$jobs"
    [[ -z "$alone" ]] || limit=1
    while [[ "$running" -ge "$limit" ]]; do
        wait -n || true
        running=$((running - 1))
    done
    keys[i]="$key"
    run_one "$i" "$label" "$folder" "$exe" "$args" &
    running=$((running + 1))
    i=$((i + 1))
    if [[ -n "$alone" ]]; then
        wait -n || true
        running=0
    fi
done <"$work/binaries"
count=$i

# Outputs in the order the binaries were listed, each as soon as it and those before it are done.
: >"$work/all.log"
for ((i = 0; i < count; i++)); do
    while [[ ! -f "$work/$i.rc" ]]; do sleep 0.2; done
    cat "$work/$i.log" | tee -a "$work/all.log"
    [[ "$(cat "$work/$i.rc")" -eq 0 ]] || status=1
done
wait

# This run's times, for the next run's order (kept for what did not run this time).
{
    for ((i = 0; i < count; i++)); do
        printf '%s\t%s\n' "${keys[i]}" "$(sed -n 's/^     Took \([0-9.]*\) s,.*/\1/p' "$work/$i.log")"
    done
    if [[ -f "$times" ]]; then cat "$times"; fi
} | awk -F'\t' '!seen[$1]++' | sort >"$work/times" && mv "$work/times" "$times" || true

# Doc-tests, unless the selection names single targets (cargo cannot mix those with --doc).
if [[ ! " ${selection[*]} " =~ \ --(test|lib|bin|example|bench|tests|bins)\  ]]; then
    cargo test --release "${selection[@]}" --doc 2>&1 | tee -a "$work/all.log" || status=$?
fi

log="$work/all.log"
# Each binary prints "test result: ok. 12 passed; 0 failed; 3 ignored; ..." once.
read -r passed failed ignored < <(
    sed -n 's/^test result: [A-Za-z]*\. \([0-9]*\) passed; \([0-9]*\) failed; \([0-9]*\) ignored.*/\1 \2 \3/p' "$log" |
        awk '{p+=$1; f+=$2; i+=$3} END {print p+0, f+0, i+0}'
)
# A test of a feature the engine lacks (acceptance::skip_without: `terraform query` and actions
# under OpenTofu) returns at once, which the harness counts as a pass, after printing
# "skipped: <test>: <reason>": counted here as skipped instead.
engine_skips="$(grep -c '^skipped: ' "$log" || true)"
passed=$((passed - engine_skips))
ignored=$((ignored + engine_skips))
echo
echo "================================================================"
grep -E '^     Running |^     Took |^   Doc-tests |^test result: ' "$log" | sed 's/^ *//' || true
echo "----------------------------------------------------------------"
if [[ "$status" -ne 0 && "$failed" -eq 0 ]]; then
    echo "a test binary failed without a test failing (exit $status): see the output above"
fi
# Tests named `wait_…` are about waits (a rollout, a Job, a claim, a load balancer, a failing one
# saying why: acceptance/tests/suites/waits.rs, workload.rs): the summary counts them apart.
waits="$(grep -cE '^test ([A-Za-z0-9_]+::)*wait_[A-Za-z0-9_]* \.\.\. ok$' "$log" || true)"
echo "summary: $passed passed ($waits of them waits), $failed failed, $ignored skipped"
# Which engine ran (printed once by each test process that ran one), and why tests or their
# last parts were skipped.
grep -E '^engine: ' "$log" | sort -u | sed 's/^/  /' || true
grep -E '^skipped( part)?: ' "$log" | sed 's/^/  /' || true
# provider-live/tests/conformance.rs prints its per-type table of hashicorp's facts checked
# (above, in its binary's output) and these totals.
grep -E '^conformance (total:|skipped) ' "$log" || true
# The minimal corpus (acceptance/tests/suites/minimal.rs) prints a line per resource type:
# "minimal: <type>: config applied, defaults checked N, import verified", and one per data source
# ("minimal data: <type>: ...").
if grep -q '^minimal: ' "$log"; then
    sed -n 's/^minimal: [a-z0-9_]*: config applied, defaults checked \([0-9]*\), \(.*\)$/\1 \2/p' "$log" |
        awk '{types++; defaults+=$1; if ($2 == "import" && $3 == "verified") imports++}
             END {printf "conformance: %d types with a minimal config, %d defaults checked, %d imports verified", types, defaults, imports}'
    echo ", $(grep -c '^minimal data: ' "$log" || true) data sources read a missing object"
fi
# acceptance/tests/suites/differential.rs: its counts beside hashicorp's binary, or why it was skipped.
grep -E '^differential: ([0-9]+ configurations run|skipped)' "$log" || true
exit "$status"
