#!/usr/bin/env bash
# The linker of the darwin cross builds (scripts/build-platforms.sh): LLVM's Mach-O linker as the
# Rust toolchain ships it (rust-lld), against the libSystem stub that zig ships. zig compiles the
# C (aws-lc) as for every platform, but its own Mach-O linker crashes on aws-lc's s2n-bignum
# assembly (p384_montjscalarmul.o; zig 0.13 to 0.15). Takes the cc-style arguments rustc passes.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
lld="$(rustc --print sysroot)/lib/rustlib/$(rustc -vV | sed -n 's/^host: //p')/bin/rust-lld"
args=()
while (($#)); do
    case "$1" in
        -arch) args+=(-arch "$2"); shift ;;
        -mmacosx-version-min=*) args+=(-platform_version macos "${1#*=}" "${1#*=}") ;;
        -Wl,*) IFS=, read -ra words <<<"${1#-Wl,}"; args+=("${words[@]}") ;;
        # libSystem is also libc and libm; nothing the providers link calls iconv.
        -nodefaultlibs | -lc | -lm | -liconv) ;;
        *) args+=("$1") ;;
    esac
    shift
done
exec "$lld" -flavor darwin -syslibroot "$root/.tools/darwin-sdk" "${args[@]}"
