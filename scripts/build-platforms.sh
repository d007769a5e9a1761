#!/usr/bin/env bash
# make release: the provider binaries of every platform named (e.g. darwin_arm64 linux_arm64),
# other than this machine's, which `cargo build-all` builds into target/release. Each is a
# release build of the two providers alone, linked by zig through cargo-zigbuild (installed,
# pinned, by scripts/cross-setup.sh), into target/cross/<target>/release: a target folder of its
# own, so a cross build never waits on the everyday build's lock. Platforms run one after the
# other (each uses every core).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

# `OS_ARCH TARGET` of each platform named that is not this machine's (tools/src/release/platforms.rs).
cross="$(cargo run --release --quiet --bin release -- --cross-targets --platforms "$*")"
[[ -n "$cross" ]] || exit 0

scripts/cross-setup.sh
export PATH="$root/.tools/ziglang/ziglang:$root/.tools/bin:$PATH"
target_dir="${CARGO_TARGET_DIR:-target}"
[[ "$target_dir" = /* ]] || target_dir="$root/$target_dir"
export CARGO_TARGET_DIR="$target_dir/cross"
# aws-lc's Windows assembly is NASM's; its crate ships the assembled objects, used without NASM.
export AWS_LC_SYS_PREBUILT_NASM=1
# macOS: linked by rust-lld (scripts/darwin-link.sh says why), for macOS 11 and later.
export CARGO_TARGET_AARCH64_APPLE_DARWIN_LINKER="$root/scripts/darwin-link.sh"
export CARGO_TARGET_X86_64_APPLE_DARWIN_LINKER="$root/scripts/darwin-link.sh"
export MACOSX_DEPLOYMENT_TARGET=11.0
while read -r platform target; do
    echo "build-platforms: $platform ($target)"
    cargo zigbuild --release --locked --target "$target" -p provider-live -p provider-records
done <<<"$cross"
