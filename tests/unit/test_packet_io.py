"""The tester ports' backend setting (trial/packet_io.py): auto unless
V6BENCH_TESTER_BACKEND names one; anything else is a usage error; the
engine spec's ports carry it, and a self-test made with another is stale."""

from __future__ import annotations

import pytest

from v6bench import selftest
from v6bench.core.errors import UsageError
from v6bench.engine.spec import Port, RateStep, Stream, TrialSpec, Walk
from v6bench.trial import packet_io


def test_auto_unless_the_environment_names_one(monkeypatch):
    monkeypatch.delenv(packet_io.ENV, raising=False)
    assert packet_io.chosen() == "auto"
    monkeypatch.setenv(packet_io.ENV, "af_packet")
    assert packet_io.chosen() == "af_packet"
    monkeypatch.setenv(packet_io.ENV, " af_xdp ")
    assert packet_io.chosen() == "af_xdp"
    monkeypatch.setenv(packet_io.ENV, "dpdk")
    with pytest.raises(UsageError, match="V6BENCH_TESTER_BACKEND: 'dpdk' is not one of auto, af_packet, af_xdp, xdp_live"):
        packet_io.chosen()


def test_a_selftest_of_another_backend_is_stale(monkeypatch):
    monkeypatch.setenv(packet_io.ENV, "af_packet")
    now = selftest.machine()
    plan = {"arrangement": "split", "tester_tx": [0], "tester_rx": 0, "dut": [1]}
    stored = {"environment": dict(now), "cpu_plan": plan, "mtu": 1500}
    assert selftest.stale(stored, plan, (128,), 1500, now) is None
    monkeypatch.setenv(packet_io.ENV, "af_xdp")
    why = selftest.stale(stored, plan, (128,), 1500, selftest.machine())
    assert why == "its tester packet I/O (V6BENCH_TESTER_BACKEND) was af_packet, now af_xdp"


def _spec(*streams: dict, backend_: str = "xdp_live", **port_a) -> TrialSpec:
    a = Port("t1", "t1-r1", backend=backend_, tx_fps=1000, **port_a)
    b = Port("t2", "t2-r1", backend=backend_)
    return TrialSpec((a, b), tuple(Stream(f"s{i}", "t1", "t2", frame_size=128, **s) for i, s in enumerate(streams)),
                     duration_s=1)


def test_xdp_live_stays_only_where_the_in_kernel_sender_can_send():
    """One whole UDP stream at one rate from one template: xdp_live; anything
    else (a walk included), and a port that only receives, runs af_xdp (the
    engine would refuse it)."""
    cases = [
        (_spec({"ip_version": 4}), "xdp_live"),
        (_spec({"ip_version": 4}, {"ip_version": 6}), "af_xdp"),
        (_spec({"ip_version": 4, "protocol": "icmp_echo"}), "af_xdp"),
        (_spec({"ip_version": 4, "fragment_mtu": 576}), "af_xdp"),
        (_spec({"ip_version": 4}, rate_step=RateStep(1, 10)), "af_xdp"),
        # RFC 4814's ports (the default) are a walk: the engine's in-kernel sender has one template
        (_spec({"ip_version": 4, "walk": Walk(src_port=("1024-65535",), dst_port=("1-49151",), order="permuted",
                                              seed=7)}), "af_xdp"),
    ]
    for spec, want in cases:
        settled = packet_io.settle(spec)
        assert [p.backend for p in settled.ports] == [want, "af_xdp"], spec
    other = packet_io.settle(_spec({"ip_version": 4}, backend_="af_packet"))
    assert [p.backend for p in other.ports] == ["af_packet", "af_packet"], "other settings are left as they are"


@pytest.mark.parametrize("setting,senders", [("auto", 2), ("af_xdp", 2), ("af_packet", 1), ("xdp_live", 1)])
def test_several_senders_stay_where_the_backend_has_them(setting, senders):
    """af_packet and xdp_live send from one thread a port: a port given two
    senders gets one, on its first CPU; auto and af_xdp keep both."""
    spec = packet_io.settle(_spec({"ip_version": 4}, backend_=setting, tx_cpu=(3, 4), tx_queues=2))
    port = spec.ports[0]
    assert (port.tx_queues or 1, port.tx_cpu) == ((2, (3, 4)) if senders == 2 else (1, 3))
