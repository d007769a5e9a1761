#!/usr/bin/env bash
# make golden: refreshes the in-repo copy of the kube-apiserver transcripts
# (acceptance/kube-golden/, read by the test server's conformance replay and by unit tests)
# from the shared recordings in ../shared/kube-golden/, and says which files changed.
# Usage: scripts/golden.sh [SOURCE_DIR]   (default: ../shared/kube-golden beside this checkout)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source_dir="${1:-$root/../shared/kube-golden}"
target="$root/acceptance/kube-golden"

[[ -d "$source_dir" ]] || { echo "golden: $source_dir does not exist: nothing to copy" >&2; exit 1; }
mkdir -p "$target"

changed=0
for file in "$source_dir"/*.json "$source_dir"/README.md; do
    [[ -f "$file" ]] || continue
    name="$(basename "$file")"
    if [[ ! -f "$target/$name" ]]; then
        echo "golden: added $name"
    elif ! cmp -s "$file" "$target/$name"; then
        echo "golden: updated $name"
    else
        continue
    fi
    cp "$file" "$target/$name"
    changed=$((changed + 1))
done
# A transcript withdrawn upstream goes here too; the allowlist may still name it.
for file in "$target"/*.json; do
    [[ -f "$file" ]] || continue
    name="$(basename "$file")"
    if [[ ! -f "$source_dir/$name" ]]; then
        echo "golden: removed $name"
        rm "$file"
        changed=$((changed + 1))
    fi
done
echo "golden: $changed file(s) changed; $(ls "$target"/*.json | wc -l) transcripts in ${target#"$root"/}"
