"""RFC 4814 ports on the wire (``--ports``, core/frames.PORTS), as root,
on the tests' own lab site: by default every test frame of a stateless
path takes its own pseudorandom source and destination port (each value
once a cycle), flow 2 within its share of the source range, which a DUT
scenario scoped to flow 2 matches; through a DUT that keeps state (NAT44
and stateful NAT64) each stream walks the ports of its preliminary
phase's connections (RFC 9693), which the phase opens before the trial:
the trial opens none; a phase the DUT cannot keep up with stops the
trial, naming the rate (or the connections) to lower."""

from __future__ import annotations

import contextlib
import json
from typing import Iterator

import pytest

from cli_site import PREFIX, RUN_DIR, capture, clean_site, remove_run_dir, trial_json, tshark_fields, v6bench  # noqa: F401
from v6bench.lab.emulated import state
from v6bench.trial import preliminary
from v6bench.lab.model.site import Site

pytestmark = [pytest.mark.netns, pytest.mark.usefixtures("clean_site", "remove_run_dir")]
SITE = Site(RUN_DIR, PREFIX)


@contextlib.contextmanager
def lab_up(*options: str) -> Iterator[str]:
    """A lab (``lab up OPTIONS``) for the block, taken down after it; yields R1's namespace."""
    up = v6bench("lab", "up", *options)
    assert up.returncode == 0, up.stderr
    try:
        yield state.load(SITE).node("r1")["netns"]
    finally:
        v6bench("lab", "down")


def test_each_frame_has_its_own_ports_and_a_scoped_acl_still_finds_flow_2(tmp_path):
    with lab_up("--acl", "1", "--acl-family", "ipv6", "--scope", "flow2") as r1:
        pcap = tmp_path / "r1-t2.pcap"
        with capture(r1, "r1-t2", pcap, 2000, "udp") as tshark:
            res = trial_json("--mix", "50/50", "--frame-size", "128", "--rate", "1kfps", "--duration", "1",
                             "--flows", "2")
        assert res["lost_frames"] == 0 and res["rx_frames"] == 1000, res["tester_limited_reasons"]
        assert res["ports"]["used"] == "rfc4814" and res["ports"]["src"] == {"1": [1024, 49184], "2": [49185, 65534]}
        rows = tshark_fields(pcap, "ip.src", "ipv6.src", "udp.srcport", "udp.dstport")
        test = [r for r in rows if r[0] == "198.18.0.2" or r[1] == "2001:2::2"]
        assert len(test) == 1000, (len(test), tshark)
        src = [int(r[2]) for r in test]
        dst = [int(r[3]) for r in test]
        # Each stream walks its values once a cycle: within 250 frames a stream, no port repeats.
        assert len(set(zip(src, [r[0] or r[1] for r in test]))) == 1000
        assert all(1024 <= p <= 65534 for p in src) and all(1 <= p <= 49151 for p in dst)
        assert len(set(dst)) > 200, "destination ports vary"
        flow2 = sum(p >= 49185 for p in src)
        assert flow2 == 500, flow2
        # The scoped ACL walks IPv6's flow 2 only: its permit matched exactly that flow's 250 frames.
        assert res["dut"]["acl"]["r1"]["v6"] == {"permit": 250, "deny": 0}, res["dut"]["acl"]


def test_many_addresses_cross_the_router_each_pair_once_a_cycle(tmp_path):
    """``--addresses 64`` (trial/addresses.py): the router routes the ranges, every frame arrives, and on R1's
    link to t2 (tshark, apart from the engine) each family's frames carry 64 sources and 64 destinations, the
    first 64 of each range, every one of them within the first 64 frames; each stream made as many distinct
    4-tuples as frames (its ports walk too)."""
    with lab_up() as r1:
        pcap = tmp_path / "r1-t2.pcap"
        with capture(r1, "r1-t2", pcap, 1000, "udp") as tshark:
            res = trial_json("--mix", "50/50", "--frame-size", "128", "--rate", "1kfps", "--duration", "1",
                             "--addresses", "64")
        assert res["lost_frames"] == 0 and res["rx_frames"] == 1000, res["tester_limited_reasons"]
        assert res["addresses"]["count"] == 64 and {s["distinct_flows"] for s in res["streams"]} == {500}
        rows = tshark_fields(pcap, "ip.src", "ip.dst", "ipv6.src", "ipv6.dst")
        assert len(rows) == 1000, (len(rows), tshark)
        for fam, (s_at, d_at), first_src, first_dst in ((4, (0, 1), "198.18.128.", "198.19.128."),
                                                        (6, (2, 3), "2001:2:0:8000::", "2001:2:0:9000::")):
            pairs = [(r[s_at], r[d_at]) for r in rows if r[s_at]]
            assert len(pairs) == 500, fam
            assert len({s for s, _ in pairs}) == len({d for _, d in pairs}) == 64, fam
            assert len(set(pairs[:64])) == 64, "each pair once in a cycle"
            assert all(s.startswith(first_src) and d.startswith(first_dst) for s, d in pairs), fam


def test_through_a_dut_that_keeps_state_the_preliminary_phase_opens_every_connection_the_trial_uses(tmp_path):
    with lab_up("--nat44", "--nat64", "stateful") as r1:
        pcap = tmp_path / "r1-t1.pcap"  # as sent: R1's source NAT may move a port where two inside addresses meet
        # Up to preliminary.ATTEMPTS phases: a phase that lost a frame is run again (once in CI on an Intel Xeon,
        # 2 CPUs: 3,100 frames captured, this count's old limit), and each is on the wire.
        with capture(r1, "r1-t1", pcap, preliminary.ATTEMPTS * 2 * 506 + 2000 + 10, "udp") as tshark:
            res = trial_json("--mix", "50/50", "--frame-size", "128", "--rate", "2kfps", "--duration", "1",
                             "--preliminary-connections", "500", "--preliminary-rate", "5000")
        assert res["lost_frames"] == 0 and res["rx_frames"] == 2000, res["tester_limited_reasons"]
        # 500 connections a stream: 23 source ports × 23 destination ports would share a factor; 23 × 22 do not.
        assert res["ports"]["src"] == {"1": [1024, 1046]} and res["ports"]["dst"] == [1, 22]
        pre = res["preliminary"]
        assert pre["connections_per_stream"] == {"1": 23 * 22} and pre["rx_frames"] == pre["tx_frames"] == 2 * 506
        assert pre["dut_timeout_s"] == 300.0 and pre["revisit_s"] == pytest.approx(506 / 1000)  # set on R1, read back
        # IPv4's connections (NAT44) and IPv6's (stateful NAT64, translated, then NAT44) were all open before the
        # trial's first frame, and its frames opened none.
        tr = res["dut"]["translator"]
        assert tr["sessions_before"] >= 2 * 506 and tr["new_sessions"] == 0, tr
        rows = tshark_fields(pcap, "ip.src", "ipv6.src", "udp.srcport", "udp.dstport")
        sent = [(int(r[2]), int(r[3])) for r in rows if r[0] == "198.18.0.2" or r[1] == "2001:2::2"]
        # The phase's frames, then the trial's; a phase run again adds its first attempt's frames up to where the
        # DUT's input dropped them (a veth ring full drops before tshark's tap).
        most = pre["attempts"] * 2 * 506 + 2000
        assert len(sent) == most if pre["attempts"] == 1 else 2 * 506 + 2000 < len(sent) <= most, (len(sent), tshark)
        assert set(sent) == {(s, d) for s in range(1024, 1047) for d in range(1, 23)}


def test_both_ways_t2_answers_on_the_connections_the_phase_learned(tmp_path):
    """RFC 9693's Responder (trial/answers.py): t2's frames go to the address and port R1's NAT chose for
    each of t1's connections (read off the wire by tshark, apart from the engine), from its destination
    port; every frame arrives both ways, IPv4's answers to IPv6 as IPv6, and the trial opens no session."""
    with lab_up("--nat44", "--nat64", "stateful") as r1:
        pcap = tmp_path / "r1-t2.pcap"
        with capture(r1, "r1-t2", pcap, preliminary.ATTEMPTS * 2 * 110 + 2 * 500, "udp") as tshark:  # a phase run again
            res = trial_json("--mix", "50/50", "--frame-size", "128", "--rate", "500fps", "--duration", "1",
                             "--bidirectional", "--preliminary-connections", "100", "--preliminary-rate", "5000")
        assert res["lost_frames"] == 0 and res["rx_frames"] == 1000, res["tester_limited_reasons"]
        streams = {s["name"]: s for s in res["streams"]}
        assert streams["ipv6-t2-t1"]["ip_version"] == 4 and streams["ipv6-t2-t1"]["rx_ip_version"] == 6
        assert len(streams) == 4 and all(s["rx_frames"] == 250 for s in streams.values()), streams
        assert res["dut"]["translator"]["new_sessions"] == 0, res["dut"]["translator"]
        rows = tshark_fields(pcap, "ip.src", "ip.dst", "udp.srcport", "udp.dstport")
        t2 = "198.19.0.2"
        opened = {(r[0], int(r[2]), int(r[3])) for r in rows if r[1] == t2}  # as t1's frames arrive at t2
        answers = [(r[1], int(r[3]), int(r[2])) for r in rows if r[0] == t2]  # t2's frames, read back the same way
        assert len(opened) == 2 * 110 and len(answers) == 500, (len(opened), len(answers), tshark)
        assert set(answers) <= opened and len(set(answers)) == 2 * 110


def test_a_preliminary_phase_the_dut_cannot_keep_stops_the_trial_naming_the_rate():
    # R1's table holds 500 connections; the phase opens 2,070 (45 × 46).
    r = v6bench("trial", "--nat44", "--max-connections", "500", "--mix", "100/0", "--rate", "1kfps",
                "--duration", "1", "--preliminary-connections", "2000", "--selftest", "never")
    assert r.returncode == 2, r.stderr
    assert "--preliminary-rate: RFC 9693's preliminary phase: the DUT passed 500 of 2,070 frames" in r.stderr, r.stderr
    assert "--preliminary-connections) below its table's capacity" in r.stderr
    fixed = trial_json("--nat44", "--ports", "fixed", "--mix", "100/0", "--frame-size", "128", "--rate", "1kfps",
                       "--duration", "1")
    assert fixed["ports"] == {"asked": "fixed", "used": "fixed"} and "preliminary" not in fixed
    assert {(s["src_port"], s["dst_port"]) for s in fixed["engine"]["streams"]} == {(49184, 7)}


def test_a_test_whose_points_the_dut_refuses_stores_each_failed_and_goes_on(tmp_path):
    """The same refusal in a run: each point is stored failed with the reason, the run goes on to the
    next and ends "finished", and the command exits 1 saying how many failed."""
    db = tmp_path / "r.db"
    r = v6bench("test", "latency", "--nat44", "--max-connections", "500", "--mix", "100/0", "--frame-size", "128,256",
                "--loads", "1kfps", "--duration", "1", "--repeat", "1", "--preliminary-connections", "2000",
                "--selftest", "never", "--db", str(db), "--json", timeout=300)
    assert r.returncode == 1 and "2 test(s) of run 1 failed" in r.stderr, r.stderr
    assert r.stderr.count("refused: preliminary_rate_fps: RFC 9693's preliminary phase: the DUT passed") == 2, r.stderr
    out = json.loads(r.stdout)
    assert out["run"]["status"] == "finished" and [t["status"] for t in out["tests"]] == ["failed", "failed"], out["run"]


@pytest.mark.skipif(len(__import__("os").sched_getaffinity(0)) < 2, reason="steering needs 2 CPUs")
def test_with_receive_packet_steering_one_flow_is_forwarded_on_one_cpu_and_many_flows_on_each():
    """``--rps all`` (lab/emulated/rps.py): R1's receive queues steer each
    frame by its flow's hash; one flow (fixed ports, one address pair) is
    forwarded on one CPU, every frame; many (RFC 4814 ports over 64
    addresses a side) on both CPUs, neither taking more than 3/4 (for a
    fair hash each takes half, ± 0.5 % at one standard deviation over
    10,000 frames). Counted by R1's own per-CPU rules, read with the trial."""
    from v6bench.lab.machine import nsctl

    with lab_up("--rps", "all") as r1:
        mask = nsctl.command(r1, ["cat", "/sys/class/net/r1-t1/queues/rx-0/rps_cpus"]).strip()
        assert int(mask.replace(",", ""), 16) == 3, mask
        one = trial_json("--mix", "100/0", "--ports", "fixed", "--frame-size", "128", "--rate", "10kfps", "--duration", "1")
        many = trial_json("--mix", "100/0", "--addresses", "64", "--frame-size", "128", "--rate", "10kfps",
                          "--duration", "1")
        for res in (one, many):
            assert res["lost_frames"] == 0 and res["rx_frames"] == 10_000, res["tester_limited_reasons"]
        by_cpu = {k: r["dut"]["rps"]["r1"] for k, r in (("one", one), ("many", many))}
        assert sorted(by_cpu["one"]) == sorted(by_cpu["many"]) == ["0", "1"], by_cpu
        # The learning phase's few frames (other flows) may land on the other CPU; the flow's 10,000 do not.
        assert max(by_cpu["one"].values()) >= 10_000 and min(by_cpu["one"].values()) <= 10, by_cpu
        assert sum(by_cpu["many"].values()) >= 10_000 and max(by_cpu["many"].values()) <= 7_500, by_cpu
        assert "distinct_flows" not in one["streams"][0] and many["streams"][0]["distinct_flows"] > 1000, \
            many["streams"][0]
