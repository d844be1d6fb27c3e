"""Small and jumbo MTUs (`--mtu`, seed 000 Topology B), as root, on the
tests' own lab site: a capture on the small-MTU link (tshark, in R2's
namespace) shows IPv4 fragmented by R1 and IPv6 fragmented at the source
with Fragment headers; the receiver reassembles every test frame and counts
the fragments; jumbo frames cross whole; IPv6 over a link below 1280 bytes
is refused."""

from __future__ import annotations


import pytest

from cli_site import PREFIX, RUN_DIR, capture, clean_site, remove_run_dir, tshark_fields, trial_json, v6bench  # noqa: F401
from v6bench.lab.emulated import state
from v6bench.lab.model.site import Site

pytestmark = [pytest.mark.netns, pytest.mark.usefixtures("clean_site", "remove_run_dir")]
SITE = Site(RUN_DIR, PREFIX)


def trial(*args: str) -> dict:
    return trial_json("--frame-size", "1518", "--rate", "1kfps", "--duration", "1", *args)


def core_trial(tmp_path, bpf: str, mix: str, fields: tuple[str, ...], dst: str) -> tuple[dict, list[list[str]]]:
    """A 1518-byte trial of one family while tshark captures the R1–R2 link
    (in R2's namespace); returns its stream, which lost nothing, and the
    captured ``fields`` (the last being the destination) of frames to ``dst``."""
    pcap = tmp_path / "core.pcap"
    with capture(state.load(SITE).node("r2")["netns"], "r2-r1", pcap, 400, bpf):
        res = trial("--mix", mix)
    (s,) = res["streams"]
    # Once in a fresh clone's suite (2026-12-03, EPYC-25-1) 39 of 1,000 frames were lost here with no tester reason,
    # not seen since in 6 runs alone: the message carries the fragments' and the routers' counts for next time.
    assert s["lost_frames"] == 0, (res["tester_limited_reasons"], s["fragments"], res["dut"].get("interfaces"))
    test = [r for r in tshark_fields(pcap, *fields) if r[-1] == dst]
    assert len(test) > 100
    return s, test


def test_small_mtu_link_carries_fragments_and_the_receiver_reassembles(tmp_path):
    up = v6bench("lab", "up", "--topology", "b", "--mtu", "r1-r2=500")
    assert up.returncode == 0, up.stderr
    try:
        s, test = core_trial(tmp_path, "ip", "100/0", ("frame.len", "ip.flags.mf", "ip.frag_offset", "ip.dst"), "198.19.0.2")
        assert s["rx_frames"] == 1000
        f = s["fragments"]
        # 1480 data bytes at MTU 500: 480 + 480 + 480 + 40, fragmented by R1, not by the tester.
        assert (f["tx_fragments"], f["rx_fragments"], f["reassembled_frames"], f["incomplete_frames"]) == (0, 4000, 1000, 0)
        assert max(int(r[0]) for r in test) == 514, "no frame above the 500-byte MTU (+14 bytes Ethernet)"
        # tshark shows the offset in 8-byte units, as the header carries it.
        assert {(r[1], int(r[2]) * 8) for r in test} == {("1", 0), ("1", 480), ("1", 960), ("0", 1440)}
        # IPv6 cannot cross this link, and the trial says so before sending.
        r = v6bench("trial", "--mix", "50/50", "--frame-size", "128", "--rate", "1kfps", "--duration", "1")
        assert r.returncode == 2 and "IPv6 cannot cross link r1-r2 (MTU 500 < 1280" in r.stderr, r.stderr
    finally:
        v6bench("lab", "down")


def test_ipv6_is_fragmented_at_the_source_and_jumbo_frames_cross_whole(tmp_path):
    up = v6bench("lab", "up", "--topology", "b", "--mtu", "all=9000,r1-r2=1280")
    assert up.returncode == 0, up.stderr
    try:
        s, test = core_trial(tmp_path, "ip6 and not icmp6", "0/100",
                             ("frame.len", "ipv6.fraghdr.more", "ipv6.fraghdr.offset", "ipv6.dst"), "2001:2:0:1::2")
        f = s["fragments"]
        assert (f["per_frame"], f["tx_fragments"], f["rx_fragments"], f["reassembled_frames"]) == (2, 2000, 2000, 1000)
        # 1460 bytes behind IPv6 at MTU 1280: 1232 + 228, each with an 8-byte Fragment header.
        assert {(int(r[0]), r[1], int(r[2]) * 8) for r in test} == {(14 + 1280, "1", 0), (14 + 48 + 228, "0", 1232)}
        # Jumbo frames cross whole where every link carries them.
        v6bench("lab", "down")
        assert v6bench("lab", "up", "--topology", "a", "--mtu", "9000").returncode == 0
        res = trial("--mix", "50/50", "--frame-size", "9018")
        assert res["lost_frames"] == 0 and res["rx_frames"] == 1000, res["tester_limited_reasons"]
        assert all(s["fragments"] is None for s in res["streams"])
    finally:
        v6bench("lab", "down")
