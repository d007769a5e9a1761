#!/usr/bin/env bash
# What building the providers for every platform needs, pinned, for `make release` (and
# `make release-check`) only; the everyday `make setup` installs none of it:
#   the Rust standard libraries of the other targets   rustup target add
#   zig, the linker for every other platform           PyPI ziglang, into .tools/ziglang
#   cargo-zigbuild, which hands cargo's links to zig   crates.io, into .tools/bin
#   (macOS links go to rust-lld instead, scripts/darwin-link.sh, with zig's libSystem stub)
# Quick when already done: a stamp records what was installed.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tools="$root/.tools"
python="${PYTHON:-python3}"

targets=(aarch64-apple-darwin x86_64-apple-darwin aarch64-unknown-linux-gnu x86_64-pc-windows-gnu)
ziglang_req="ziglang==0.15.2"
zigbuild_version="0.24.1"

stamp="$tools/cross.stamp"
want="cross v2; ${targets[*]}; $ziglang_req; cargo-zigbuild $zigbuild_version"
installed="$(rustup target list --installed 2>/dev/null || true)"
missing=()
for target in "${targets[@]}"; do
    grep -qx "$target" <<<"$installed" || missing+=("$target")
done
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" && ${#missing[@]} -eq 0 \
    && -x "$tools/ziglang/ziglang/zig" && -x "$tools/bin/cargo-zigbuild" && -e "$tools/darwin-sdk/usr/lib/libSystem.tbd" ]]; then
    exit 0
fi

mkdir -p "$tools/bin"
if [[ ${#missing[@]} -gt 0 ]]; then
    echo "cross-setup: rustup target add ${missing[*]}"
    rustup target add "${missing[@]}"
fi
echo "cross-setup: installing $ziglang_req into $tools/ziglang"
rm -rf "$tools/ziglang"
"$python" -m pip install --disable-pip-version-check --root-user-action=ignore --quiet \
    --target "$tools/ziglang" "$ziglang_req"
echo "cross-setup: installing cargo-zigbuild $zigbuild_version into $tools/bin"
cargo install --quiet --locked --version "$zigbuild_version" --root "$tools" cargo-zigbuild
# The darwin links' system root (scripts/darwin-link.sh): zig's stub of libSystem, macOS's libc.
mkdir -p "$tools/darwin-sdk/usr/lib"
ln -sfn "$tools/ziglang/ziglang/lib/libc/darwin/libSystem.tbd" "$tools/darwin-sdk/usr/lib/libSystem.tbd"
echo "$want" >"$stamp"
