"""The engine's in-kernel sender (``xdp_live``, engine/src/live.rs) through a
Linux router namespace: frames byte-exact as an independent decoder reads
them, exact counts, refusals counted, stalls reported."""

from __future__ import annotations

import os
import subprocess
import time
import warnings

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether

from v6bench import engine

from spoiled import TRIAL_RUNS, spoiled
from test_engine_router import (assert_a_stall_is_the_testers, assert_a_stall_slipped, assert_dropped_are_refused, ip_in_receives,
                                stalled, with_outage)

pytestmark = pytest.mark.netns

#: Frames the capture in the router keeps per direction.
CAPTURED = 200

CAPTURE = """
import socket, sys, select, time
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
s.setsockopt(socket.SOL_SOCKET, 33, 1 << 24)  # SO_RCVBUFFORCE: hold every frame kept
s.bind((sys.argv[1], 0))
print("ready", flush=True)
want, end, out = int(sys.argv[2]), time.monotonic() + float(sys.argv[3]), []
while len(out) < want and time.monotonic() < end:
    if select.select([s], [], [], 0.1)[0]:
        f, addr = s.recvfrom(65535)
        if addr[2] != socket.PACKET_OUTGOING:
            out.append(f.hex())
print("\\n".join(out))
"""


def live_ready(lab) -> None:
    """veth takes XDP frames only into an end with NAPI: GRO on, as the
    emulated lab's routers have it (v6bench.lab.machine.napi)."""
    for ifname in (lab.r1_a, lab.r1_b):
        lab.in_router("ethtool", "-K", ifname, "gro", "on")


def live_spec(lab, rate_fps: float, duration_s: float, backend: str = "xdp_live") -> dict:
    """IPv4 from a to b (128 B) and IPv6 from b to a (256 B): one stream a port."""
    return {
        "spec_version": 3,
        "netns_prefix": os.path.commonprefix([lab.t1, lab.t2]),
        "duration_s": duration_s,
        "drain_s": 1.0,
        "ports": [lab.port("a", tx_rate={"fps": rate_fps}, backend=backend), lab.port("b", tx_rate={"fps": rate_fps}, backend=backend)],
        "streams": [
            {"name": "v4", "tx_port": "a", "rx_port": "b", "ip_version": 4, "frame_size": 128},
            {"name": "v6", "tx_port": "b", "rx_port": "a", "ip_version": 6, "frame_size": 256},
        ],
    }


def one_way_spec(lab) -> dict:
    """IPv4 from a to b only, 20,000 frames/s for 3 s (60,000 frames)."""
    spec = live_spec(lab, rate_fps=20_000, duration_s=3)
    del spec["ports"][1]["tx_rate"]
    spec["streams"].pop()
    return spec


def signature(payload: bytes) -> tuple[int, int, int]:
    """(stream, seq, tx_ns) of a v6bench signature (docs/engine-spec.md)."""
    assert payload[:2] == b"\x76\x36", payload[:4].hex()
    return int.from_bytes(payload[2:4], "big"), int.from_bytes(payload[4:10], "big"), int.from_bytes(payload[10:18], "big")


#: A latency no frame stamped on the right clocks reaches in this trial: 0.1 s.
SANE_LATENCY_NS = 100_000_000


def _captured_trial(lab) -> tuple[dict, list[list[bytes]], int, int]:
    """One 2-s trial with the router's captures: the result, the frames
    captured on each router port, t2's IP receive count before, the start."""
    before = ip_in_receives(lab, lab.t2)
    # ARP and ND frames come first: capture a few more than the test frames kept.
    caps = [subprocess.Popen(["ip", "netns", "exec", lab.r1, "python3", "-c", CAPTURE, ifname, str(CAPTURED + 20), "20"],
                             stdout=subprocess.PIPE, text=True) for ifname in (lab.r1_a, lab.r1_b)]
    for c in caps:
        assert c.stdout.readline().strip() == "ready"
    started_ns = time.time_ns()
    r = engine.run_trial(live_spec(lab, rate_fps=20_000, duration_s=2))
    return r, [[bytes.fromhex(x) for x in c.communicate(timeout=30)[0].split()] for c in caps], before, started_ns


def test_frames_are_exact_and_counted_once(router_lab):
    lab = router_lab
    live_ready(lab)
    # A trial the host spoiled (the sender fell behind and caught up, or offered less than the rate:
    # ``tester_limited``, the machine's doing, not the engine's) runs again, up to spoiled.TRIAL_RUNS times. Seen in
    # 2 of 6 fresh clones' make test on 2026-11-27 (stalls of 64 and 72 ms at the start); 6 of 6 passed alone.
    for attempt in range(1, TRIAL_RUNS + 1):
        r, frames, before, started_ns = _captured_trial(lab)
        if not spoiled(r):  # the tier's retry rule (spoiled.py): a busy host's port offered 0.295 % short once
            break
        warnings.warn(f"trial {attempt} of {TRIAL_RUNS} spoiled by the host: {r['tester_limited_reasons']}")
    assert [p["backend"] for p in r["ports"]] == ["xdp_live", "xdp_live"]
    v4, v6 = r["streams"]
    for s in (v4, v6):
        assert s["tx_frames"] == s["rx_frames"] == 40_000
        assert s["lost_frames"] == s["duplicate_frames"] == s["reordered_frames"] == s["refused_frames"] == 0
        lat = s["latency_ns"]
        # Stamps on the right clocks: a wrong one is off by seconds or more. The median itself is the host's
        # (3-4 us on an idle Intel Xeon, 2026-12-01; 5.5 ms in one CI run, whose first trial a 64-ms stall spoiled:
        # suspected: both senders spin on the 2 CPUs and the router's softirqs wait their turn).
        assert lat["count"] == 40_000 and 0 < lat["min"] <= lat["p50"] < SANE_LATENCY_NS, lat
        assert s["negative_latency_frames"] == 0
    assert not r["tester_limited"], r["tester_limited_reasons"]
    for p in r["ports"]:
        assert abs(p["tx"]["offered_fps"] - 20_000) / 20_000 < 0.001, p["tx"]
        # The stamp-to-hand-over bound (docs/engine-spec.md): measured, a mean within its largest.
        assert 0 < p["tx"]["tx_stamp_mean_error_ns"] <= p["tx"]["tx_stamp_max_error_ns"], p["tx"]
        assert p["rx"]["foreign_frames"] == 0
    assert ip_in_receives(lab, lab.t2) == before, "test frames never entered the tester host's own stack"
    for ns, ifname in ((lab.t1, lab.t1_if), (lab.t2, lab.t2_if)):
        assert "xdp" not in lab.in_ns(ns, "ip", "link", "show", ifname).stdout

    # What the router received, as scapy decodes it: valid checksums, one
    # sequence number a frame from 0, IPv4 Identification = sequence number,
    # transmit stamps on CLOCK_REALTIME, on the rate's schedule.
    arrived_v4 = [Ether(f) for f in frames[0] if Ether(f).haslayer(UDP)][:CAPTURED]
    arrived_v6 = [Ether(f) for f in frames[1] if Ether(f).haslayer(UDP)][:CAPTURED]
    assert len(arrived_v4) == len(arrived_v6) == CAPTURED
    for family, arrived, size in ((IP, arrived_v4, 128), (IPv6, arrived_v6, 256)):
        seqs, stamps = [], []
        for e in arrived:
            assert len(bytes(e)) == size - 4
            ip = e[family]
            if family is IP:
                sent = ip.chksum
                del ip.chksum
                assert IP(bytes(ip)).chksum == sent, "IPv4 header checksum"
            udp = e[UDP]
            sent = udp.chksum
            assert sent != 0
            del udp.chksum
            assert family(bytes(ip))[UDP].chksum == sent, "UDP checksum"
            stream, seq, tx_ns = signature(bytes(udp.payload))
            assert stream == (0 if family is IP else 1)
            if family is IP:
                assert ip.id == seq & 0xFFFF
            seqs.append(seq)
            stamps.append(tx_ns)
        assert seqs == list(range(CAPTURED))
        # Frame k is stamped when sent: its due time t0 + k × 50 µs plus a lag
        # of at most the port's reported largest lag.
        port = r["ports"][0 if family is IP else 1]["tx"]
        late = [t - k * 50_000 for k, t in enumerate(stamps)]
        assert 0 <= max(late) - min(late) <= port["max_lag_ns"] + 1_000, (family.__name__, port)
        assert started_ns < stamps[0] < started_ns + 10_000_000_000


def test_frames_due_while_the_link_is_down_are_refused_and_lost(router_lab, tmp_path):
    """As for the other backends (test_engine_router): refused by the far
    end, offered and lost, the schedule kept. The outage is the 200 ms plus
    the two ``ip`` commands' own time, longer here than with the other
    backends because the in-kernel sender spins on a CPU the commands share."""
    live_ready(router_lab)
    r = with_outage(router_lab, one_way_spec(router_lab), tmp_path)
    port = r["ports"][0]
    tx = port["tx"]
    assert port["backend"] == "xdp_live"
    assert not r["tester_limited"], r["tester_limited_reasons"]
    assert 2_000 <= tx["refused_frames"] <= 12_000, tx
    assert_dropped_are_refused(port)
    assert tx["tx_frames"] + tx["refused_frames"] == 60_000
    assert r["streams"][0]["refused_frames"] == tx["refused_frames"]
    assert r["streams"][0]["rx_frames"] == tx["tx_frames"]
    assert r["totals"]["lost_frames"] == tx["refused_frames"]


def test_a_far_end_without_napi_is_an_error_not_loss(router_lab):
    """Without GRO (no NAPI) a veth end refuses every XDP frame: the trial
    says why and is the tester's, never the DUT's loss."""
    spec = live_spec(router_lab, rate_fps=2_000, duration_s=1)
    r = engine.run_trial(spec)
    assert r["tester_limited"]
    assert any("neither taken nor refused" in x and "NAPI" in x for x in r["tester_limited_reasons"]), r["tester_limited_reasons"]


def test_a_stalled_sender_is_reported_not_hidden(router_lab, tmp_path):
    """Stopping the engine for 200 ms at 20,000 frames/s: the program's loop
    ends on the signal, starts again after it, and sends the frames due
    meanwhile back to back: tester_limited, every frame still sent."""
    live_ready(router_lab)
    assert_a_stall_is_the_testers(stalled(router_lab, one_way_spec(router_lab), tmp_path))


def test_a_stall_slips_the_programs_schedule_instead_of_bursting(router_lab, tmp_path):
    """With ``after_stall: slip`` the program moves its t0 by the stall (engine/src/live.rs)."""
    live_ready(router_lab)
    spec = {**one_way_spec(router_lab), "after_stall": "slip", "tester_limited_backlog_frames": 256,
            "tester_limited_slip_ratio": 0.2}
    assert_a_stall_slipped(stalled(router_lab, spec, tmp_path))
