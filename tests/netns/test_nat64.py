"""NAT64 on R1 (``--nat64``, TAYGA in R1's namespace), as root, on the
tests' own lab site: IPv6 sent by t1 arrives at t2 as IPv4 and is counted
as one stream; stateless also IPv4 from t2 as IPv6 at t1; both sides of R1
captured (tshark) and decoded by scapy: every translated frame carries the
test frame's UDP data byte for byte and checksums scapy computes alike;
stateful NAT64 beside NAT44 in one trial, its sessions read back (opened
by RFC 9693's preliminary phase, none by the trial); and no
TAYGA left when the lab goes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from scapy.all import IP, UDP, IPv6, rdpcap, raw

from cli_site import PREFIX, RUN_DIR, capture, clean_site, remove_run_dir, trial_json, v6bench  # noqa: F401
from v6bench.lab.emulated import state
from v6bench.lab.model.site import Site

pytestmark = [pytest.mark.netns, pytest.mark.usefixtures("clean_site", "remove_run_dir")]
SITE = Site(RUN_DIR, PREFIX)
MAGIC = b"\x76\x36"  # the engine's signature (engine/src/wire/signature.rs)


def taygas_of_this_site() -> list[int]:
    """TAYGA processes started for this test site's lab (their configuration lies in its run directory)."""
    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
            status = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if b"tayga" in cmd and str(RUN_DIR).encode() in cmd and status != "Z":
            out.append(int(pid))
    return out


def udp_checks(pkt) -> bytes:
    """The UDP data of ``pkt`` (scapy), after checking that its UDP
    checksum (and an IPv4 header's) is the one scapy computes."""
    ip = pkt[IP] if IP in pkt else pkt[IPv6]
    again = ip.__class__(raw(ip))
    if IP in pkt:
        del again.chksum
    del again[UDP].chksum
    rebuilt = again.__class__(raw(again))
    assert rebuilt[UDP].chksum == pkt[UDP].chksum, pkt.summary()
    if IP in pkt:
        assert rebuilt.chksum == pkt[IP].chksum, pkt.summary()
    return raw(pkt[UDP].payload)


def test_stateless_nat64_translates_both_ways_with_data_and_checksums_intact(tmp_path):
    up = v6bench("lab", "up", "--nat64", "stateless")
    assert up.returncode == 0, up.stderr
    try:
        assert taygas_of_this_site(), "TAYGA runs in R1's namespace"
        r1 = state.load(SITE).node("r1")["netns"]
        left, right = tmp_path / "r1-t1.pcap", tmp_path / "r1-t2.pcap"
        with capture(r1, "r1-t1", left, 3000, "udp"), capture(r1, "r1-t2", right, 3000, "udp"):
            res = trial_json("--mix", "50/50", "--frame-size", "256", "--rate", "500fps", "--duration", "1",
                             "--bidirectional")
        assert res["lost_frames"] == 0 and res["rx_frames"] == 1000, res["tester_limited_reasons"]
        translated = {(s["direction"], s["ip_version"], s.get("rx_ip_version")) for s in res["streams"]}
        assert translated == {("t1->t2", 6, 4), ("t1->t2", 4, None), ("t2->t1", 4, 6), ("t2->t1", 6, None)}
        rx = {p["name"]: p["rx"] for p in res["engine"]["ports"]}
        assert rx["t1"]["bad_checksum_frames"] == rx["t2"]["bad_checksum_frames"] == 0
        t = res["dut"]["translator"]
        assert t["mode"] == "stateless" and t["running"] and t["out_frames"] >= 500, t
        # Both sides of R1, decoded by scapy: each test frame's UDP data (signature and padding) arrives as it
        # was sent, under the other family's header, with the checksums scapy computes.
        sent, came = {}, {}
        for pkt in rdpcap(str(left)) + rdpcap(str(right)):
            if UDP not in pkt or not raw(pkt[UDP].payload).startswith(MAGIC):
                continue
            ip = pkt[IP] if IP in pkt else pkt[IPv6]
            key = raw(pkt[UDP].payload)[2:10]  # stream and sequence number
            pair = (ip.src, ip.dst)
            if pair in (("2001:2::2", "2001:2:0:6464::c613:2"), ("198.19.0.2", "198.18.65.2")):
                sent[key] = udp_checks(pkt)
            elif pair in (("198.18.65.2", "198.19.0.2"), ("2001:2:0:6464::c613:2", "2001:2::2")):
                came[key] = (udp_checks(pkt), 4 if IP in pkt else 6)
        # The engine counted every frame (above); the captures are tshark's, which may miss a frame on a busy
        # machine (one of 500 in one full netns run of 2026-11-28, none in three runs of this test alone), so
        # the frames compared are those both sides captured, nearly all of them, and every one must match.
        both = sent.keys() & came.keys()
        assert len(both) >= 495 and len(sent) <= 500 and len(came) <= 500, (len(sent), len(came))
        assert {v for k, (_, v) in came.items() if k in both} == {4, 6}
        assert all(came[k][0] == sent[k] for k in both)
    finally:
        v6bench("lab", "down")
    assert not taygas_of_this_site(), "TAYGA ended with the lab"


def test_stateful_nat64_beside_nat44_in_one_trial_and_its_sessions():
    res = trial_json("--nat64", "stateful", "--nat44", "--scope", "flow2", "--flows", "2", "--mix", "50/50",
                     "--frame-size", "128", "--rate", "2kfps", "--duration", "1")
    assert res["lost_frames"] == 0 and res["rx_frames"] == 2000, res["tester_limited_reasons"]
    by = {s["name"]: s for s in res["streams"]}
    assert by["ipv6-t1-t2-flow2"]["rx_ip_version"] == 4 and "rx_ip_version" not in by["ipv6-t1-t2"]
    t = res["dut"]["translator"]
    # RFC 4814's ports: RFC 9693's preliminary phase opened each stream's connections (IPv6's flow 2 through TAYGA's
    # pool and R1's source NAT, IPv4's flow 2 through NAT44) before the trial, whose frames opened none.
    pre = res["preliminary"]
    assert pre["rx_frames"] == pre["tx_frames"] == 4 * pre["connections_per_stream"]["2"], pre
    assert t["mode"] == "stateful" and t["out_frames"] == 500 and t["new_sessions"] == 0, t
    assert t["sessions_before"] >= 2 * pre["connections_per_stream"]["2"] and t["sessions"] <= t["sessions_before"], t
    assert not taygas_of_this_site(), "a temporary lab's TAYGA ended with it"
