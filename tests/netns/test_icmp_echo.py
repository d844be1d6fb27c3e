"""ICMP echo load (`--icmp-echo dut|far`, seed 000 Fig. 12, seed 003), as
root, on the tests' own lab site: R1 answers the requests to its own
address, the far engine answers those routed through R1, every reply is
counted at t1 with its round trip, and a capture on t2's link shows the
requests and the engine's replies."""

from __future__ import annotations


import pytest

from cli_site import PREFIX, RUN_DIR, capture, clean_site, remove_run_dir, tshark_fields, trial_json, v6bench  # noqa: F401
from v6bench.lab.emulated import state
from v6bench.lab.model.site import Site

pytestmark = [pytest.mark.netns, pytest.mark.usefixtures("clean_site", "remove_run_dir")]
SITE = Site(RUN_DIR, PREFIX)


def echo(target: str, size: int) -> dict:
    return trial_json("--icmp-echo", target, "--mix", "50/50", "--frame-size", str(size), "--rate", "1kfps", "--duration", "1")


def test_echo_requests_are_answered_by_the_dut_and_by_the_far_engine(tmp_path):
    assert v6bench("lab", "up", "--topology", "a").returncode == 0
    try:
        for size in (128, 1500):
            res = echo("dut", size)
            assert res["lost_frames"] == 0 and res["rx_frames"] == 1000, res["tester_limited_reasons"]
            assert {s["protocol"] for s in res["streams"]} == {"icmp_echo"}
            # Either order: every trial draws which family leads the round robin (trial/spec.py).
            assert sorted(s["direction"] for s in res["streams"]) == ["t1->198.18.0.1->t1", "t1->2001:2::1->t1"]
            ports = {p["name"]: p for p in res["engine"]["ports"]}
            assert ports["t2"]["rx"]["echo_requests"] == 0, "R1 answered, nothing went on to t2"
            assert all(s["latency_ns"]["min"] > 0 for s in res["streams"])
        pcap = tmp_path / "r1-t2.pcap"
        # On R1's end of t2's link (the engine's own frames bypass taps on its side).
        with capture(state.load(SITE).node("r1")["netns"], "r1-t2", pcap, 200, "icmp or icmp6"):
            res = echo("far", 256)
        assert res["lost_frames"] == 0 and res["rx_frames"] == 1000, res["tester_limited_reasons"]
        t2 = {p["name"]: p for p in res["engine"]["ports"]}["t2"]["rx"]
        assert t2["echo_requests"] == t2["echo_replies_sent"] == 1000
        rows = tshark_fields(pcap, "icmp.type", "icmpv6.type", "frame.len")
        kinds = {(r[0] or r[1]) for r in rows if r[2] == "252"}
        assert {"8", "0", "128", "129"} <= kinds, kinds
    finally:
        v6bench("lab", "down")
