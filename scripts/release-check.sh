#!/usr/bin/env bash
# make release-check: the release's builds for other platforms, taken from its zips in
# RELEASE_DIR (default dist/release, what `make release` wrote) and used where they can be:
#   linux_arm64    run under qemu-user by the acceptance harness (acceptance/tests/suites/platform_run.rs):
#                  the handshake, GetProviderSchema of both providers, and a plan against the
#                  test server through the engine
#   windows_amd64  run under wine by the same harness: the handshake over TCP on 127.0.0.1,
#                  GetProviderSchema of both providers, and the plan
#   darwin_*       checked, not run (no macOS here): Mach-O architecture, an executable, and
#                  only the system's own libraries linked (tools/src/macho.rs)
# Where qemu or wine is missing (and cannot be installed: root with apt-get installs Debian's
# qemu-user-static, libc6-arm64-cross, wine), its run is skipped, naming what is missing.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
release="${RELEASE_DIR:-dist/release}"
work="$root/.work/release-check"
version="$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)"
results=()
failed=0

note() { results+=("$1"); echo "release-check: $1"; }

# The binaries of one platform, out of its zips, under the names the harness looks for.
unpack() {
    local platform="$1" dir="$work/$1"
    rm -rf "$dir"
    mkdir -p "$dir"
    for type in live records; do
        local zip="$release/terraform-provider-${type}_${version}_${platform}.zip"
        [[ -f "$zip" ]] || { echo "release-check: $zip is missing: run \`make release\` first" >&2; exit 1; }
        python3 - "$zip" "$dir" "$type" <<'PY'
import os, sys, zipfile
zip_path, out, type_name = sys.argv[1:]
with zipfile.ZipFile(zip_path) as archive:
    (entry,) = archive.infolist()
    suffix = ".exe" if entry.filename.endswith(".exe") else ""
    target = os.path.join(out, f"terraform-provider-{type_name}{suffix}")
    with archive.open(entry) as source, open(target, "wb") as sink:
        sink.write(source.read())
    os.chmod(target, 0o755)
PY
    done
    echo "$dir"
}

# Debian's packages for a missing tool, when this user may install them.
install() {
    if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
        echo "release-check: installing $* (Debian)"
        (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@") >/dev/null 2>&1 || true
    fi
}

# The acceptance harness's run of platform_run.rs on one build.
harness() {
    env "$@" scripts/test.sh -p acceptance --test platform_run
}

# linux_arm64 under qemu-user: its glibc build needs Debian's arm64 glibc (-L).
dir="$(unpack linux_arm64)"
qemu="$(command -v qemu-aarch64-static || command -v qemu-aarch64 || true)"
[[ -n "$qemu" && -d /usr/aarch64-linux-gnu ]] || install qemu-user-static libc6-arm64-cross
qemu="$(command -v qemu-aarch64-static || command -v qemu-aarch64 || true)"
if [[ -z "$qemu" ]]; then
    note "linux_arm64: run SKIPPED: qemu-aarch64 (Debian qemu-user-static) is missing"
elif [[ ! -d /usr/aarch64-linux-gnu ]]; then
    note "linux_arm64: run SKIPPED: the arm64 glibc (Debian libc6-arm64-cross) is missing"
elif harness PROVIDER_BIN_DIR="$dir" PROVIDER_RUNNER="$qemu -L /usr/aarch64-linux-gnu"; then
    note "linux_arm64: ran under $(basename "$qemu"): handshake, GetProviderSchema, plan: passed"
else
    note "linux_arm64: run under $(basename "$qemu") FAILED"
    failed=1
fi

# windows_amd64 under wine, in a wine prefix of its own (made once, before the timed handshake).
dir="$(unpack windows_amd64)"
command -v wine >/dev/null || install wine wine64
if ! command -v wine >/dev/null; then
    note "windows_amd64: run SKIPPED: wine (Debian wine, wine64) is missing"
else
    export WINEPREFIX="$work/wine" WINEDEBUG=-all
    [[ -d "$WINEPREFIX" ]] || wineboot --init >/dev/null 2>&1 || true
    # Debian 12's wine 8 lacks bcryptprimitives.dll (Windows 10 and later have it): a stand-in
    # in this prefix alone (scripts/wine/bcryptprimitives.c), built by the release's zig.
    shim="$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll"
    if [[ ! -f "$shim" ]]; then
        scripts/cross-setup.sh
        .tools/ziglang/ziglang/zig cc -target x86_64-windows-gnu -shared -O2 -o "$shim" \
            scripts/wine/bcryptprimitives.c -ladvapi32
    fi
    if harness PROVIDER_BIN_DIR="$dir" PROVIDER_RUNNER=wine PROVIDER_NETWORK=tcp; then
        note "windows_amd64: ran under wine: handshake over TCP, GetProviderSchema, plan: passed"
    else
        note "windows_amd64: run under wine FAILED"
        failed=1
    fi
fi

# The darwin builds: checked, not run.
for platform in darwin_amd64 darwin_arm64; do
    dir="$(unpack "$platform")"
    arch="${platform#darwin_}"
    [[ "$arch" == amd64 ]] && arch=x86_64
    if cargo run --release --quiet --bin macho_check -- "$arch" "$dir"/terraform-provider-*; then
        note "$platform: checked, not run (no macOS here): $arch Mach-O executables, system libraries only"
    else
        note "$platform: check FAILED"
        failed=1
    fi
done

echo
printf 'release-check: %s\n' "${results[@]}"
exit "$failed"
