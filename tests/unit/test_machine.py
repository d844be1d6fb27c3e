"""The machine record (core/machine.py): read from this machine, and how
runs name and tell machines apart, also runs stored before the record."""

from __future__ import annotations

import os

from v6bench import selftest
from v6bench.core import machine

OLD = {"cpu_model": "AMD EPYC", "cpus": 2, "kernel": "6.18.44-fc-v782", "machine": "x86_64"}  # a run of 2026-11-28 06:00
NEW = {"host": {"vendor": "AuthenticAMD", "model_name": "AMD EPYC", "family": 26, "model": 2, "stepping": 1, "cpus": 2,
                "hypervisor": "KVM"}}
XEON = {"host": {**NEW["host"], "vendor": "GenuineIntel", "model_name": "Intel Xeon", "family": 6}}


def test_this_machine_is_read_and_recorded_with_every_run():
    r = machine.read()
    assert r["cpus"] == os.cpu_count() and r["kernel"] == os.uname().release
    assert r["vendor"] and r["model_name"] and isinstance(r["family"], int) and r["memory_bytes"] > 2 ** 28
    assert r["caches"] and all({"level", "type", "size_bytes", "shared_by_cpus"} <= set(c) for c in r["caches"])
    assert selftest.machine()["host"] == r  # what a run's environment and a self-test's carry


def test_machines_are_told_apart_by_what_they_are_and_old_runs_by_what_they_stored():
    assert machine.label(NEW) == "AMD EPYC (family 26 model 2 stepping 1), 2 CPUs, KVM"
    assert machine.label(OLD) == "AMD EPYC, 2 CPUs"
    assert machine.same(NEW, NEW) and not machine.same(NEW, XEON) and not machine.same(OLD, XEON)
    # A field a run did not record is unknown, never a wildcard: an old run is the same machine as none.
    assert not machine.same(OLD, NEW) and not machine.same(OLD, OLD) and machine.identity(OLD) is None
    assert machine.group(NEW) == machine.label(NEW) != machine.group(XEON)
    assert machine.group(OLD) == "AMD EPYC, 2 CPUs (machine not recorded in full)" != machine.group(NEW)
    bare = {"host": {**NEW["host"], "hypervisor": None}}   # bare metal: no hypervisor, yet recorded in full
    assert machine.identity(bare) is not None and not machine.same(bare, NEW)
    partial = {"host": {**NEW["host"], "stepping": None}}
    assert machine.identity(partial) is None and not machine.same(partial, partial)
    assert machine.key(NEW) == ("AuthenticAMD", "AMD EPYC", 26, 2, 1, 2, "KVM")
