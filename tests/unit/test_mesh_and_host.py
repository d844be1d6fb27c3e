"""Mesh flows and the host-stack tests without a lab: flow order, start
spread, campaign keys and their refusals, and iperf3's JSON as v6bench
keeps it."""

from __future__ import annotations

from pathlib import Path

import pytest

from v6bench.campaign import plan
from v6bench.campaign.spec import load, parse_campaign
from v6bench.core.errors import UsageError
from v6bench.host import iperf
from v6bench.host.kernel import Host, Pair
from v6bench.trial import mesh
from v6bench.trial.request import make_request


def test_partial_mesh_sends_n_minus_1_ports_to_the_last():
    assert mesh.flows("mesh:4", "partial") == [("t1", "t4"), ("t2", "t4"), ("t3", "t4")]
    assert mesh.senders("mesh:4", "partial") == ["t1", "t2", "t3"]


def test_full_mesh_is_every_port_to_every_other_in_round_robin_from_the_next():
    f = mesh.flows("mesh:4", "full")
    assert f[:3] == [("t1", "t2"), ("t1", "t3"), ("t1", "t4")]
    assert f[3:6] == [("t2", "t3"), ("t2", "t4"), ("t2", "t1")]
    assert len(f) == 12 and len(set(f)) == 12
    with pytest.raises(UsageError, match="mesh:N"):
        mesh.flows("a", "full")


def test_start_spread_over_one_percent_of_the_trial_is_the_testers():
    eng = {"ports": [{"tx": {"first_lag_ns": 2_000_000}}, {"tx": None}, {"tx": {"first_lag_ns": 50_000}}]}
    assert mesh.start_spread(eng, 1.0) == (0.002, None)
    spread, why = mesh.start_spread(eng, 0.1)
    assert spread == 0.002 and "RFC 2889" in why


def test_a_mesh_request_sets_the_directions_itself():
    with pytest.raises(UsageError, match="^mesh: "):
        make_request("50/50", 128, "10%", 1, True, mesh="full")
    with pytest.raises(UsageError, match="^mesh: "):
        make_request("50/50", 128, "10%", 1, False, mesh="star")


CAMPAIGN = """
name = "c"
[lab]
topology = "{topology}"
[[test]]
{test}
"""


def campaign(test: str, topology: str = "a"):
    return parse_campaign(CAMPAIGN.format(topology=topology, test=test), "c.toml")


def test_mesh_test_needs_a_mesh_lab_and_expands_like_a_frame_test():
    with pytest.raises(UsageError, match=r"test\[0\]\.kind: mesh traffic needs a mesh:N topology"):
        campaign('kind = "mesh"')
    c = campaign('kind = "mesh"\npattern = "full"\nloads = ["10%", "20kpps"]\nframe_sizes = [128]', "mesh:4")
    (t,) = c.tests
    assert t.params.pattern == "full" and t.params.loads == ("10%", "20kpps")
    assert [p.key for p in plan.expand(c)] == ["0:mesh:100/0:128:uni:1", "0:mesh:0/100:128:uni:1"]
    with pytest.raises(UsageError, match="loads"):
        campaign('kind = "mesh"\nloads = ["fast"]', "mesh:4")


def test_host_stack_tests_expand_per_family_variant_and_repetition():
    c = campaign('kind = "stack-throughput"\nprotocols = ["tcp"]\nmessage_sizes = [64, 65507]\nrepeat = 2')
    keys = [p.key for p in plan.expand(c)]
    assert len(keys) == 2 * 2 * 2 and len(set(keys)) == 8
    assert keys[0] == "0:stack-throughput:100/0:0:uni:1:protocol=tcp:message_bytes=64"
    c = campaign('kind = "rr-latency"\npayload_sizes = [8]\nmixes = ["0/100"]\nrepeat = 1')
    assert [dict(p.variant)["payload_bytes"] for p in plan.expand(c)] == [8, "mtu"]


@pytest.mark.parametrize("test, message", [
    ('kind = "stack-throughput"\nmixes = ["50/50"]', "one family at a time"),
    ('kind = "stack-throughput"\nframe_sizes = [128]', "sends no test frames"),
    ('kind = "stack-throughput"\ndirections = ["bi"]', "runs from t1 to t2"),
    ('kind = "stack-throughput"\nmessage_sizes = [70000]', "largest UDP datagram"),
    ('kind = "stack-throughput"\nprotocols = ["sctp"]', "protocols"),
    ('kind = "rr-latency"\npayload_sizes = [4]', "UDP header"),
])
def test_host_stack_tests_refuse_what_does_not_apply(test, message):
    with pytest.raises(UsageError, match=message):
        campaign(test)


IPERF_TCP = {"start": {"version": "iperf 3.12"},
             "end": {"sum_sent": {"seconds": 2.0, "bytes": 2_500_000, "bits_per_second": 1e7, "retransmits": 3},
                     "sum_received": {"seconds": 2.0, "bytes": 2_400_000, "bits_per_second": 9.6e6},
                     "cpu_utilization_percent": {"host_total": 12.5, "remote_total": 30.0}}}


def test_iperf_summary_keeps_received_throughput_cpu_and_tcp_retransmits():
    pair = Pair(Host("t1", "ns1", "t1-r1", "198.18.0.102", "2001:2::66"),
                Host("t2", "ns2", "t2-r1", "198.19.0.102", "2001:2:0:1::66"), "routed")
    s = iperf.summarize(IPERF_TCP, "tcp", 1024, 6, pair)
    assert (s["received_bps"], s["sent_bps"], s["retransmits"]) == (9.6e6, 1e7, 3)
    assert (s["client_cpu_pct"], s["server_cpu_pct"], s["tool"]) == (12.5, 30.0, "iperf 3.12")
    assert s["server"] == "t2 2001:2:0:1::66" and s["path"] == "routed"
    udp = {**IPERF_TCP, "end": {**IPERF_TCP["end"], "sum_received": {**IPERF_TCP["end"]["sum_received"],
                                                                     "lost_packets": 10, "lost_percent": 1.0, "jitter_ms": 0.01}}}
    u = iperf.summarize(udp, "udp", 1024, 4, pair)
    assert u["datagrams_lost"] == 10 and u["loss_ratio"] == pytest.approx(0.01) and "retransmits" not in u


CAMPAIGNS = Path(__file__).parents[2] / "campaigns"


@pytest.mark.parametrize("path", sorted(str(p) for p in CAMPAIGNS.glob("*.toml")))
def test_every_shipped_campaign_parses_and_expands(path):
    assert plan.expand(load(path))


def test_seed_004_campaign_has_its_mesh_and_latency_parts():
    c = load(str(CAMPAIGNS / "gamess-forwarding.toml"))
    kinds = [(t.kind, getattr(t.params, "pattern", None)) for t in c.tests]
    assert ("mesh", "partial") in kinds and ("mesh", "full") in kinds and ("rr-latency", None) in kinds
    assert c.lab.topology == "mesh:4" and c.dut.shape
