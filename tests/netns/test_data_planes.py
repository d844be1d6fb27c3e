"""The routers' data planes (lab/dataplanes/), as root, on the tests' own
lab site: the XDP forwarder attached to every R1 interface forwards both
families both ways with its counts equal to the engine's, and writes an
IPv4 frame as scapy decodes it (TTL, header checksum, MACs); a frame it cannot forward (IPv6 hop-by-hop options) takes the
kernel's slow path and is counted so; the kernel's own count equals the
engine's; Open vSwitch's userspace datapath, its daemons in R1's
namespace, forwards both families by routes and neighbours it learned,
its flows' counts equal to the engine's, its threads' CPU time the
router's, and nothing of it is left when the lab goes; a DUT configuration the XDP forwarder cannot carry is refused
in one line before any lab is built."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from scapy.all import IP, UDP, Ether, raw

from cli_site import PREFIX, RUN_DIR, clean_site, namespaces, remove_run_dir, trial_json, v6bench  # noqa: F401
from v6bench.lab.emulated import state
from v6bench.lab.model.site import Site

pytestmark = [pytest.mark.netns, pytest.mark.usefixtures("clean_site", "remove_run_dir")]
SITE = Site(RUN_DIR, PREFIX)


def _agrees(res: dict) -> dict:
    """R1's data-plane counts over trial ``res``, after checking that they equal what the engine received."""
    plane = res["dut"]["data_plane"]
    r1 = plane["routers"]["r1"]
    assert r1["beyond_engine_ipv4_frames"] == r1["beyond_engine_ipv6_frames"] == 0, plane
    assert r1["forwarded_ipv4_frames"] + r1["forwarded_ipv6_frames"] == res["rx_frames"], plane
    return r1


def link_of(netns: str, ifname: str) -> dict:
    """``ip -j link show`` of ``ifname`` in ``netns``."""
    (link,) = json.loads(subprocess.run(["ip", "-n", netns, "-j", "link", "show", "dev", ifname],
                                        capture_output=True, text=True, check=True).stdout)
    return link


def test_the_xdp_forwarder_forwards_both_ways_counting_what_the_engine_counts(tmp_path):
    up = v6bench("lab", "up", "--data-plane", "xdp")
    assert up.returncode == 0, up.stderr
    try:
        r1 = state.load(SITE).node("r1")
        for i in r1["interfaces"]:
            assert link_of(r1["netns"], i["name"])["xdp"]["prog"]["name"] == "v6b_forward"
        # Fixed ports: no preliminary phase (its flow cache is state a flow's first frame makes), so the trial's
        # first frames are the misses.
        res = trial_json("--mix", "50/50", "--rate", "500fps", "--duration", "1", "--bidirectional", "--ports", "fixed")
        assert res["lost_frames"] == 0 and res["rx_frames"] == 1000, res["tester_limited_reasons"]
        assert res["lab"]["data_plane"]["name"] == "xdp" and res["lab"]["data_plane"]["source_sha256"]
        counts = _agrees(res)
        assert counts["forwarded_ipv4_frames"] == counts["forwarded_ipv6_frames"] == 500
        assert counts["slow_path_frames"] <= 4, counts  # the first frames, before the neighbours were known
        # What the program writes, decoded by scapy: a frame redirected by XDP bypasses every capture point
        # (and the engine does not check IPv4 header checksums), so one IPv4 frame is run through R1's program
        # by the kernel's test run (BPF_PROG_TEST_RUN, looked up from R1's loopback): redirected, TTL 63, the
        # header checksum scapy computes for the header written, from R1's MAC toward t2's (learned above).
        frame = Ether(src="02:00:00:00:00:01", dst=r1["interfaces"][0]["mac"]) / IP(
            src="198.18.0.2", dst="198.19.0.2", ttl=64) / UDP(sport=1024, dport=7) / (b"v6" * 40)
        (tmp_path / "in").write_bytes(raw(frame))
        prog = link_of(r1["netns"], "r1-t1")["xdp"]["prog"]["id"]
        run = subprocess.run(["ip", "netns", "exec", r1["netns"], "bpftool", "prog", "run", "id", str(prog),
                              "data_in", str(tmp_path / "in"), "data_out", str(tmp_path / "out")],
                             capture_output=True, text=True, check=True)
        assert "Return value: 4" in run.stdout, run.stdout  # XDP_REDIRECT
        out = Ether((tmp_path / "out").read_bytes())
        assert out[Ether].src == link_of(r1["netns"], "r1-t2")["address"] and out[IP].ttl == 63
        again = IP(raw(out[IP]))
        del again.chksum
        assert IP(raw(again)).chksum == out[IP].chksum and raw(out[UDP]) == raw(frame[UDP])
        # IPv6 frames with hop-by-hop options: every router reads them (RFC 8200 §4.3), so the kernel does.
        hbh = trial_json("--mix", "0/100", "--rate", "500fps", "--duration", "1", "--ext-headers", "hbh")
        assert hbh["lost_frames"] == 0 and hbh["rx_frames"] == 500, hbh["tester_limited_reasons"]
        assert _agrees(hbh)["slow_path_frames"] == 500
    finally:
        v6bench("lab", "down")


def ovs_processes_of_this_site() -> list[int]:
    """ovsdb-server and ovs-vswitchd processes started for this test site's lab (their files lie in its run
    directory)."""
    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if (b"ovs-vswitchd" in cmd or b"ovsdb-server" in cmd) and str(RUN_DIR).encode() in cmd:
            out.append(int(pid))
    return out


def test_open_vswitch_routes_both_ways_counting_what_the_engine_counts():
    up = v6bench("lab", "up", "--data-plane", "ovs")
    assert up.returncode == 0, up.stderr
    try:
        assert len(ovs_processes_of_this_site()) == 2
        lab = state.load(SITE)
        assert lab.data_plane == "ovs" and any(t["ifname"].startswith("ovs-vswitchd/") for t in lab.napi)
        # Fixed ports: no preliminary phase (its flow cache is state a flow's first frame makes), so the trial's
        # first frames are the misses.
        res = trial_json("--mix", "50/50", "--rate", "500fps", "--duration", "1", "--bidirectional", "--ports", "fixed")
        assert res["lost_frames"] == 0 and res["rx_frames"] == 1000, res["tester_limited_reasons"]
        counts = _agrees(res)
        assert counts["forwarded_ipv4_frames"] == counts["forwarded_ipv6_frames"] == 500
        # The datapath's misses: the first frame of each flow it caches, ARP and ND; far fewer than the frames.
        assert 0 < counts["slow_path_frames"] < 100, counts
        assert res["lab"]["data_plane"]["name"] == "ovs"
    finally:
        v6bench("lab", "down")
    assert ovs_processes_of_this_site() == []


def test_the_kernel_counts_what_the_engine_counts():
    res = trial_json("--mix", "50/50", "--rate", "500fps", "--duration", "1")
    assert res["lost_frames"] == 0 and res["rx_frames"] == 500, res["tester_limited_reasons"]
    assert res["lab"]["data_plane"] == {"name": "kernel"}
    assert _agrees(res)["slow_path_frames"] == 0


def test_a_configuration_the_xdp_forwarder_cannot_carry_is_refused_before_any_lab():
    r = v6bench("lab", "up", "--data-plane", "xdp", "--acl", "1")
    assert r.returncode == 2, r.stderr
    assert "cannot carry acl = 1" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert namespaces() == []
