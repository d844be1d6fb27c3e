# v6bench: set-up, tests and benchmarks. Every target installs what it needs
# on a fresh Debian 12 machine (as root) and is safe to re-run.

SHELL := /bin/bash
export PATH := $(HOME)/.cargo/bin:$(PATH)
# A target's independent prerequisites are made side by side: the engine's release build (on one CPU for
# most of its time: one codegen unit and LTO), its tests' build and pip's downloads overlap (about a minute
# of make test's set-up on 2 CPUs). apt runs one install at a time (dpkg's lock): each stamp that installs
# packages waits for the one before it, and whatever needs a package waits for the packages.
MAKEFLAGS += -j3

VENV    := .venv
PY      := $(VENV)/bin/python
ENGINE  := engine/target/release/v6bench-engine
ENGINE_SRC := $(shell find engine/src -name '*.rs') engine/Cargo.toml engine/Cargo.lock
STAMPS  := .make
# The namespace lab's (make demo needs no more). bird2 announces a table to an external lab's DUT over BGP;
# v6bench runs its own BIRD in a namespace, so a system BIRD that installing it started is stopped and
# disabled, never one that was there before.
APT_PKGS := iproute2 ethtool nftables netsniff-ng tshark iperf3 procps python3 python3-venv build-essential snmp \
	bird2 conntrack
# The VM router's guest image: QEMU, Debian's kernel and its headers (Jool's modules are built against
# them), busybox, the agent in the guest. On a bare machine these and the translators below are about
# half of the set-up's time (the kernel's initramfs, Jool's DKMS build), so only `setup` installs them.
VM_APT_PKGS := qemu-system-x86 linux-image-amd64 linux-headers-amd64 busybox-static snmpd
# Only the tests need a browser (the report opens in headless Chromium) and a PostgreSQL server (the
# store's tests start their own cluster from Debian's binaries, as an unprivileged user, in a temporary
# directory; a cluster that installing the package started is left as Debian runs it).
TEST_APT_PKGS := chromium postgresql
# The translators and Open vSwitch (a data plane, lab/dataplanes/ovs/), installed with their services kept from
# starting (the apt target): v6bench runs its own in a router's namespace.
NO_START_PKGS := tayga jool-dkms jool-tools openvswitch-switch
# The data planes beside the kernel's (lab/dataplanes/): the XDP forwarder is compiled with clang against libbpf's
# headers and its counters read with bpftool.
PLANE_APT_PKGS := clang libbpf-dev bpftool
# Only the benchmarks compare with xdp-trafficgen.
BENCH_APT_PKGS := xdp-tools
# The engine needs Rust 1.88 or newer: a new enough cargo on PATH (rustup's
# in ~/.cargo/bin counts) is used, otherwise Debian 12's cargo-web (Rust 1.96,
# bookworm-security) is installed and used.
RUST_MIN_MINOR := 88
# Shell: true if cargo command $(1) runs and is new enough.
RUST_OK = ver=$$($(1) --version 2>/dev/null | cut -d' ' -f2); minor=$${ver\#1.}; minor=$${minor%%.*}; [ -n "$$ver" ] && [ "$${minor:-0}" -ge $(RUST_MIN_MINOR) ]
# Shell: sets $$c to the cargo to use (PATH's if new enough, else Debian's cargo-web).
PICK_CARGO = c=cargo; ( $(call RUST_OK,cargo) ) || { c=/usr/bin/cargo; export RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc; };

.PHONY: all setup lab-setup engine demo test test-unit fuzz bench clean

all: setup

# Everything: the namespace lab, VM routers and the translators.
setup: lab-setup $(STAMPS)/apt-vm $(STAMPS)/vm-image $(STAMPS)/apt-planes

# The namespace lab: its packages, the engine, the virtual environment; v6bench on PATH.
lab-setup: $(STAMPS)/apt $(ENGINE) $(STAMPS)/venv
	@$(COMPILE) src >/dev/null
	@ln -sfn $(CURDIR)/$(VENV)/bin/v6bench /usr/local/bin/v6bench

# Re-checked whenever this Makefile (and so the package list) changes.
$(STAMPS)/apt: Makefile
	@mkdir -p $(STAMPS)
	@if [ "$$(id -u)" != 0 ]; then echo "make: run as root (apt packages, network namespaces)" >&2; exit 1; fi
	@missing=""; for p in $(APT_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if ! ( $(call RUST_OK,cargo) ) && ! ( $(call RUST_OK,/usr/bin/cargo) ); then \
	  missing="$$missing cargo-web"; \
	fi; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi; \
	case " $$missing " in *" bird2 "*) systemctl disable --now bird >/dev/null 2>&1 || true;; esac
	@touch $@

$(STAMPS)/apt-vm: Makefile $(STAMPS)/apt
	@$(call APT_MISSING,$(VM_APT_PKGS),for VM routers)
	@# The translators (NAT64): TAYGA on namespace routers, Jool in the VM router's guest (jool-dkms builds its
	@# modules against the Debian kernel's headers; lab/vm/vm_image.py puts them in the image). v6bench runs
	@# its own in a router; the packages' services would start one in this machine's own namespace, so they
	@# are installed with services kept from starting (a policy-rc.d only for that install, unless one is
	@# there) and disabled.
	@missing=""; for p in $(NO_START_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing (their services not started)"; p=/usr/sbin/policy-rc.d; made=; \
	  if [ ! -e $$p ]; then printf '#!/bin/sh\nexit 101\n' > $$p && chmod +x $$p && made=1; fi; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; rc=$$?; \
	  [ -z "$$made" ] || rm -f $$p; for u in tayga jool jool_siit openvswitch-switch; do systemctl disable $$u >/dev/null 2>&1 || true; done; \
	  [ $$rc = 0 ]; \
	fi
	@touch $@

# Shell: installs the missing ones of packages $(1), saying they are $(2).
APT_MISSING = missing=""; for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing $(2):$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi

$(STAMPS)/apt-planes: Makefile $(STAMPS)/apt | $(STAMPS)/apt-vm
	@$(call APT_MISSING,$(PLANE_APT_PKGS),for the data planes)
	@touch $@

$(STAMPS)/apt-test: Makefile $(STAMPS)/apt | $(STAMPS)/apt-vm $(STAMPS)/apt-planes
	@$(call APT_MISSING,$(TEST_APT_PKGS),for the tests)
	@touch $@

$(STAMPS)/apt-bench: Makefile $(STAMPS)/apt | $(STAMPS)/apt-vm
	@$(call APT_MISSING,$(BENCH_APT_PKGS),for the benchmarks)
	@touch $@

$(ENGINE): $(ENGINE_SRC) | $(STAMPS)/apt
	@$(PICK_CARGO) echo "building the engine with $$($$c --version)"; cd engine && $$c build --release --locked
	@touch $@

# The engine's unit tests in cargo's test profile: overflow checks on (a sum that wraps fails a test instead of
# passing a wrong plan), and quicker to build than a second optimised build; in a target directory of their
# own, so that they build beside the release binary (one cargo locks its whole target directory).
ENGINE_TESTS = cd engine && $$c test --locked --target-dir target/tests
$(STAMPS)/engine-tests: $(ENGINE_SRC) | $(STAMPS)/apt
	@$(PICK_CARGO) $(ENGINE_TESTS) --no-run -q
	@touch $@

$(STAMPS)/venv: pyproject.toml | $(STAMPS)/apt
	@mkdir -p $(STAMPS)
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q --no-compile -e '.[test]'
	@$(COMPILE) $(VENV)/lib
	@touch $@

# Python's bytecode written once: where PYTHONDONTWRITEBYTECODE is set (as on the machines we work on) the interpreter
# writes none and compiled every module it imports at every start, 0.7 s of the 1.2 s a `v6bench` command took
# before doing anything (EPYC-25-1; then 0.5 s), and the tests run hundreds. The packages' own tests are left
# out (about 15 s for the rest on 2 CPUs); the project's modules are compiled again where they changed (lab-setup).
COMPILE = $(PY) -m compileall -q -j 2 -x '/tests?/'

# The VM router's guest image (kernel + initramfs in /var/lib/v6bench/vm, docs/vm-router.md);
# rebuilt only when its inputs (kernel, packages, init) changed.
$(STAMPS)/vm-image: $(STAMPS)/apt-vm $(STAMPS)/apt-planes $(STAMPS)/venv src/v6bench/lab/vm/guest/init src/v6bench/lab/vm/vm_image.py
	$(VENV)/bin/v6bench lab vm-image
	@touch $@

engine: $(ENGINE)

# A first IPv4-vs-IPv6 measurement on the emulated lab (README).
# `v6bench run` prints the run's tables at the end; `v6bench report` writes
# the run's report (HTML, figures, CSV) and prints where it is.
demo: lab-setup
	$(VENV)/bin/v6bench run campaigns/quick.toml
	$(VENV)/bin/v6bench report

# Every test: engine unit tests, then Python unit and netns (root) tiers.
# Deterministic: property tests draw fixed cases (tests/properties.py), so a
# commit gives the same answer on every clone.
# The unit tier runs on 2 workers (pytest-xdist: it times nothing, and its simulations are CPU-bound), the netns
# tier on one: its trials time frames and need the CPUs to themselves.
test: setup $(STAMPS)/apt-test $(STAMPS)/engine-tests
	@$(PICK_CARGO) $(ENGINE_TESTS)
	$(VENV)/bin/pytest -q --durations=10 -n 2 -m "not netns" tests
	@# The builds' files written back before the netns tests time anything: on fresh clones the first trials,
	@# right after the release build, lost validation frames no tester counter showed (3 of 4 runs; suspected:
	@# the kernel's write-back of the build; with this, the next run passed them).
	@sync; sleep 5
	$(VENV)/bin/pytest -q --durations=0 --durations-min=1 -m netns tests

test-unit: setup $(STAMPS)/apt-test $(STAMPS)/engine-tests
	@$(PICK_CARGO) $(ENGINE_TESTS)
	$(VENV)/bin/pytest -q -n 2 -m "not netns" tests

# Exploring runs of the property tests, apart from `make test`: new cases on
# every run, FUZZ_SCALE times each test's own count (tests/properties.py);
# hypothesis's example database kept in .fuzz/ between runs (a failure found
# is tried first next time); the engine's property tests with a new seed
# (ENGINE_FUZZ_SCALE times their cases) and
# the kill test with new moments, each printed. About 13 minutes at the
# default scale. A case found here is mended and kept in its test.
FUZZ_SCALE ?= 40
ENGINE_FUZZ_SCALE ?= 1000
fuzz: setup $(STAMPS)/apt-test
	@mkdir -p .fuzz
	@seed=$$(od -An -N4 -tu4 /dev/urandom | tr -d ' '); echo "engine property tests: seed $$seed (V6BENCH_FUZZ_SEED), $(ENGINE_FUZZ_SCALE) x the cases"; \
	$(PICK_CARGO) cd engine && V6BENCH_FUZZ_SEED=$$seed V6BENCH_FUZZ_SCALE=$(ENGINE_FUZZ_SCALE) $$c test --profile checked --locked arbitrary_
	V6BENCH_FUZZ=1 V6BENCH_FUZZ_SCALE=$(FUZZ_SCALE) V6BENCH_KILL_SEED=random $(VENV)/bin/pytest -q -s -m property --hypothesis-show-statistics tests

# Performance against peer tools measured in the same run (docs/performance.md).
bench: setup $(STAMPS)/apt-bench
	$(PY) bench/host_memory.py
	$(PY) bench/engine_vs_trafgen.py
	$(PY) bench/sender_queues.py
	$(PY) bench/tester_vs_router.py
	$(PY) bench/lab_arrangements.py
	$(PY) bench/repeatability.py
	$(PY) bench/search_cost.py
	$(PY) bench/sensitivity.py

clean:
	rm -rf $(STAMPS) $(VENV) engine/target
