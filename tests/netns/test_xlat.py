"""464XLAT (RFC 6877; lab/model/xlat.py) on namespace routers, as root, on
the tests' own lab site: t1's IPv4 frames, captured as sent, on the
IPv6-only link between the CLAT (R1) and the PLAT (R2) and after the
PLAT, equal byte for byte the packets scapy builds from them by RFC 7915
(an independent encoder: addresses by RFC 6052, the UDP checksum over
the new pseudo-header); both ways, t2 answers t1's connections through
PLAT and CLAT, every frame arrives, and no IPv4 test frame crosses
between the routers; a hard reset of R1 leaves no TAYGA behind (the
reset's traffic is tests/netns/test_methods_lab.py's)."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
from scapy.all import IP, UDP, IPv6, Raw, rdpcap

from cli_site import PREFIX, RUN_DIR, capture, clean_site, remove_run_dir, trial_json, v6bench  # noqa: F401
from v6bench.lab.emulated import reset, state
from v6bench.lab.machine import lock
from v6bench.lab.model import translation, xlat
from v6bench.lab.model.site import Site

pytestmark = [pytest.mark.netns, pytest.mark.usefixtures("clean_site", "remove_run_dir")]
SITE = Site(RUN_DIR, PREFIX)
#: Hops a frame's TTL loses in a translating router: forwarded into TAYGA, translated (RFC 7915 §4.1,
#: §5.1: the translator decrements it as a router does), forwarded out (measured: 64 → 61 → 58).
HOPS_A_ROUTER = 3


def taygas() -> list[int]:
    """Every TAYGA process of the tests' lab site on this machine."""
    out = []
    for d in Path("/proc").iterdir():
        try:
            if d.name.isdigit() and (d / "comm").read_text().strip() == "tayga" and \
                    str(RUN_DIR) in (d / "cmdline").read_text():
                out.append(int(d.name))
        except OSError:
            continue
    return out


def test_464xlat_frames_are_rfc_7915s_at_both_links_and_t2_answers_through_both(tmp_path):
    up = v6bench("lab", "up", "--topology", "b", "--xlat", "464")
    assert up.returncode == 0, up.stderr
    try:
        lab = state.load(SITE)
        r1, r2 = lab.node("r1")["netns"], lab.node("r2")["netns"]
        links = {"sent": (r1, "r1-t1"), "between": (r1, "r1-r2"), "after": (r2, "r2-t2")}
        pcaps = {k: tmp_path / f"{k}.pcap" for k in links}
        with contextlib.ExitStack() as stack:
            for k, (ns, ifname) in links.items():
                stack.enter_context(capture(ns, ifname, pcaps[k], 5, "udp"))
            res = trial_json("--mix", "100/0", "--ports", "fixed", "--frame-size", "128", "--rate", "5fps",
                             "--duration", "1")
        assert res["lost_frames"] == 0 and res["rx_frames"] == 5, res["tester_limited_reasons"]
        assert res["dut"]["clat"]["out_frames"] == res["dut"]["translator"]["out_frames"] == 5, res["dut"]
        sent, between, after = ([f for f in rdpcap(str(pcaps[k])) if UDP in f] for k in ("sent", "between", "after"))
        assert len(sent) == len(between) == len(after) == 5
        t1_v4 = sent[0][IP].src
        r2_v4 = lab.node("r2")["interfaces"][1]["ipv4"].split("/")[0]
        for s, b, a in zip(sent, between, after):
            ip, udp = s[IP], s[UDP]
            v6 = IPv6(tc=ip.tos, fl=0, hlim=ip.ttl - HOPS_A_ROUTER, src=str(xlat.clat_address(t1_v4)),
                      dst=str(translation.embed(translation.PREFIX, ip.dst))) / \
                UDP(sport=udp.sport, dport=udp.dport) / Raw(bytes(udp.payload))
            assert bytes(b[IPv6]) == bytes(IPv6(bytes(v6))), (b[IPv6].show2(dump=True), v6.show2(dump=True))
            v4 = IP(tos=ip.tos, id=0, flags="DF", ttl=ip.ttl - 2 * HOPS_A_ROUTER, src=r2_v4, dst=ip.dst) / \
                UDP(sport=udp.sport, dport=udp.dport) / Raw(bytes(udp.payload))
            assert bytes(a[IP]) == bytes(IP(bytes(v4))), (a[IP].show2(dump=True), v4.show2(dump=True))
        # Both ways, RFC 4814 ports: t2 answers each connection t1 opened (trial/answers.py), back through the
        # PLAT and the CLAT; between the routers only IPv6 (no IPv4 test frame: R2 holds t1's IPv4 unreachable).
        v4_between = tmp_path / "v4-between.pcap"
        with capture(r1, "r1-r2", v4_between, 1, "ip and udp") as tshark:
            res = trial_json("--mix", "50/50", "--frame-size", "128", "--rate", "500fps", "--duration", "1",
                             "--bidirectional", "--preliminary-connections", "100", "--preliminary-rate", "5000")
        assert res["lost_frames"] == 0 and res["rx_frames"] == 1000, res["tester_limited_reasons"]
        assert res["dut"]["translator"]["new_sessions"] == 0 and res["dut"]["clat"]["out_frames"] == 500, res["dut"]
        assert not rdpcap(str(v4_between)), tshark
        # A hard reset of R1 rebuilds its namespace and starts the CLAT again, leaving no TAYGA behind.
        with lock.locked(SITE, "test"):
            reset.reset(SITE, state.load(SITE), "hard", "r1")
        assert len(taygas()) == 2, taygas()
    finally:
        v6bench("lab", "down")
