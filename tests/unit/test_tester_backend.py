"""The tester ports' backend setting (trial/backend.py): auto unless
V6BENCH_TESTER_BACKEND names one; anything else is a usage error; the
engine spec's ports carry it, and a self-test made with another is stale."""

from __future__ import annotations

import pytest

from v6bench import selftest
from v6bench.errors import UsageError
from v6bench.trial import backend


def test_auto_unless_the_environment_names_one(monkeypatch):
    monkeypatch.delenv(backend.ENV, raising=False)
    assert backend.chosen() == "auto"
    monkeypatch.setenv(backend.ENV, "af_packet")
    assert backend.chosen() == "af_packet"
    monkeypatch.setenv(backend.ENV, " af_xdp ")
    assert backend.chosen() == "af_xdp"
    monkeypatch.setenv(backend.ENV, "dpdk")
    with pytest.raises(UsageError, match="V6BENCH_TESTER_BACKEND: 'dpdk' is not one of auto, af_packet, af_xdp"):
        backend.chosen()


def test_a_selftest_of_another_backend_is_stale(monkeypatch):
    monkeypatch.setenv(backend.ENV, "af_packet")
    now = selftest.machine()
    plan = {"arrangement": "split", "tester_tx": [0], "tester_rx": 0, "dut": [1]}
    stored = {"environment": dict(now), "cpu_plan": plan, "mtu": 1500}
    assert selftest.stale(stored, plan, (128,), 1500, now) is None
    monkeypatch.setenv(backend.ENV, "af_xdp")
    why = selftest.stale(stored, plan, (128,), 1500, selftest.machine())
    assert why == "its tester packet I/O (V6BENCH_TESTER_BACKEND) was af_packet, now af_xdp"
