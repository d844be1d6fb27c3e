# v6bench: set-up, tests and benchmarks. Every target installs what it needs
# on a fresh Debian 12 machine (as root) and is safe to re-run.

SHELL := /bin/bash
export PATH := $(HOME)/.cargo/bin:$(PATH)

VENV    := .venv
PY      := $(VENV)/bin/python
ENGINE  := engine/target/release/v6bench-engine
STAMPS  := .make
APT_PKGS := iproute2 ethtool nftables netsniff-ng tshark procps python3 python3-venv build-essential
# The engine's dependencies need Rust 1.88 or newer: such a cargo on PATH (rustup's in ~/.cargo/bin counts) is used, otherwise Debian
# 12's cargo-web (Rust 1.96, bookworm-security) is installed.
RUST_MIN_MINOR := 88

.PHONY: all setup engine demo test test-unit bench clean

all: setup

setup: $(STAMPS)/apt $(ENGINE) $(STAMPS)/venv
	@ln -sfn $(CURDIR)/$(VENV)/bin/v6bench /usr/local/bin/v6bench  # v6bench on PATH

$(STAMPS)/apt:
	@mkdir -p $(STAMPS)
	@if [ "$$(id -u)" != 0 ]; then echo "make: run as root (apt packages, network namespaces)" >&2; exit 1; fi
	@missing=""; for p in $(APT_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	ver=$$(cargo --version 2>/dev/null | cut -d' ' -f2); minor=$${ver#1.}; minor=$${minor%%.*}; \
	if [ -z "$$ver" ] || [ "$${minor:-0}" -lt $(RUST_MIN_MINOR) ]; then \
	  missing="$$missing cargo-web"; \
	fi; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi
	@touch $@

$(ENGINE): $(shell find engine/src -name '*.rs') engine/Cargo.toml engine/Cargo.lock
	@command -v cargo >/dev/null || { echo "make: cargo not found (make setup installs Debian's cargo-web)" >&2; exit 1; }
	cd engine && cargo build --release --locked
	@touch $@

$(STAMPS)/venv: pyproject.toml
	@mkdir -p $(STAMPS)
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -e '.[test]'
	@touch $@

engine: $(ENGINE)

# A first IPv4-vs-IPv6 measurement on the emulated lab (README).
demo: setup
	$(VENV)/bin/v6bench demo

# Every test: engine unit tests, then Python unit and netns (root) tiers.
test: setup
	cd engine && cargo test --release --locked
	$(VENV)/bin/pytest -q tests

test-unit: setup
	cd engine && cargo test --release --locked
	$(VENV)/bin/pytest -q -m "not netns" tests

# Performance against peer tools measured in the same run (docs/performance.md).
bench: setup
	$(PY) bench/engine_vs_trafgen.py
	$(PY) bench/lab_arrangements.py

clean:
	rm -rf $(STAMPS) $(VENV) engine/target
