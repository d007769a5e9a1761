# Entry points for a fresh machine (Debian 12 with Rust and Python 3 + pip):
#   make demo   set up, build, apply the reference estates, show them, destroy them
#   make test   set up, build, run every test (unit, protocol and acceptance with the real engine)
#   make test-real  the acceptance tests against a real control plane from ../shared/realk8s
# ENGINE=/path/to/tofu (or terraform) runs the tests, the demo and the benchmarks with that engine,
# for that command only; `make setup TF=/path/...` alone changes the default (TF=bundled: back to
# the Terraform setup installs).

SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

CARGO ?= cargo
# The engine of this run (scripts, tests and benchmarks read it: provider_mirror::paths::engine);
# TF is its older name, and `make setup TF=...` links .tools/bin/terraform to $(TF); TOFU
# names an OpenTofu for the tests of its own behaviour (registry installation) in any run.
export ENGINE TF TOFU

.PHONY: help setup build test test-real golden catalog openapi demo break-check fuzz fmt lint clean

help:
	@echo "make demo    set up, build, apply the reference estates, show them, destroy them"
	@echo "make test    set up, build, run all tests"
	@echo "make test-real  the acceptance tests against a real control plane (../shared/realk8s)"
	@echo "make golden  refresh acceptance/kube-golden from ../shared/kube-golden"
	@echo "make catalog regenerate provider-live/catalog/kinds.tsv and data_sources.tsv from reference/"
	@echo "make openapi refresh reference/openapi from the cluster KUBECONFIG names"
	@echo "make setup   install the engine and kubectl into .tools/ (TF=... makes your own engine the default)"
	@echo "ENGINE=/path/to/tofu make test | test-real | demo   run with that engine, this once"
	@echo "make build   build the providers and lay out the mirror in dist/"
	@echo "make break-check  show that every stage's break switch makes it fail"
	@echo "make fuzz    1,000,000 fuzzed codec and validator inputs (prints the count; no panic allowed)"
	@echo "make release | registry | docs   signed registry artifacts, a registry serving them, registry docs"
	@echo "make release-check  run the linux_arm64 and windows_amd64 builds (qemu, wine), check the darwin ones"
	@echo "make fmt | lint | clean"

# TF reaches setup.sh only when setup is asked for by name: as a step of `TF=... make test`, it
# is that run's engine, and the default stays.
setup:
	@scripts/setup.sh "$(if $(filter setup,$(MAKECMDGOALS)),$(TF))"

# One release build of every binary the demo and the tests run (`cargo build-all`, an alias in
# .cargo/config.toml), then the providers packed as the engine installs them: dist/mirror +
# dist/terraformrc. `make test` reuses this build (`cargo test --release`).
TARGET_DIR := $(or $(CARGO_TARGET_DIR),target)
build:
	$(CARGO) build-all
	$(TARGET_DIR)/release/package_mirror

test: setup build
	@scripts/test.sh

# The acceptance tests against a real kube-apiserver started for the run; skipped (exit 0)
# when ../shared/realk8s is not there.
test-real: setup build
	@scripts/test-real.sh

# The kind catalog: every typed resource's and data source's fields, joined from
# hashicorp/kubernetes' schema (reference/*.paths.tsv) and the API server's OpenAPI
# (reference/openapi/) per provider-live/catalog/types.tsv, data_types.tsv and overrides.tsv.
# A unit test fails when it is stale.
catalog:
	$(CARGO) run --quiet -p kind-catalog

openapi:
	@scripts/openapi.sh

# The in-repo copy of the recorded kube-apiserver transcripts, refreshed from ../shared.
golden:
	@scripts/golden.sh

demo: setup build
	@scripts/demo.sh

# Each stage's break switch (BREAK_STAGE=N) must make that stage fail: 13 of 13.
break-check: setup build
	@scripts/break-check.sh

# The value codec and the configuration validators against 1,000,000 generated and mutated
# inputs (msgpack, JSON, typed values, timeouts strings); `make test` runs a 20,000 slice. By
# binary name, not package, as `make release` says below.
fuzz:
	$(CARGO) run --release --bin fuzz

fmt:
	$(CARGO) fmt --all

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

clean:
	$(CARGO) clean
	rm -rf dist .tools .work

# --- Registry installation (issue 14): signed release artifacts, the test registry, registry docs.
.PHONY: release release-check registry docs

# Signed registry artifacts of both providers for every platform in $(PLATFORMS), in
# $(RELEASE_DIR): zip, SHA256SUMS, .sig, manifest, and the public key signing-key.asc. This
# machine's platform is `cargo build-all`'s build; the others are cross builds with zig
# (scripts/build-platforms.sh, which installs zig and cargo-zigbuild, pinned, into .tools/ the
# first time: `make setup` does not; docs/guides/platforms.md). `make release
# PLATFORMS=linux_amd64` releases one platform. The key: RELEASE_SIGNING_KEY=<secret key file>
# or RELEASE_SIGNING_KEY_ARMOR=<the key> (with RELEASE_SIGNING_PASSPHRASE if it has one).
# Without one, a throwaway key signs them, and they are for testing only.
#
# The tools run by binary name, not by package (`-p tools`), for the reason
# acceptance/src/build.rs gives: Cargo then resolves features over the whole workspace, as
# `make build` does, and reuses its compiled dependencies instead of building them a second time
# with other features.
RELEASE_DIR ?= dist/release
PLATFORMS ?= darwin_amd64 darwin_arm64 linux_amd64 linux_arm64 windows_amd64
release:
	$(CARGO) build-all
	@scripts/build-platforms.sh $(PLATFORMS)
	$(CARGO) run --release --quiet --bin release -- --out "$(RELEASE_DIR)" --platforms "$(PLATFORMS)"

# The release's other platforms, where they can be run here: linux_arm64 under qemu-user (the
# handshake, GetProviderSchema and a plan against the test server), windows_amd64 under wine (the
# handshake over TCP and GetProviderSchema), both by the acceptance harness; the darwin builds
# are checked, not run: their Mach-O architecture and what they link. A missing qemu or wine
# skips its run, naming it. Run `make release` first.
release-check:
	@scripts/release-check.sh

# Serves $(RELEASE_DIR) as a provider registry and network mirror over HTTPS (its own CA) on
# 127.0.0.1:8443, and prints the CLI configuration to use it. Run `make release` first.
registry:
	$(CARGO) run --release --quiet --bin registry -- --dir "$(RELEASE_DIR)"

# docs/ (registry layout) regenerated from the providers' schemas, templates/ and examples/.
docs:
	$(CARGO) run --release --quiet --bin docs
