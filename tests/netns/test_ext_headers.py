"""IPv6 extension headers through the emulated router (seed 000 Fig. 15,
Table 6), as root, on the tests' own lab site: every preset crosses R1
with nothing lost, the SRH is processed by R1 (its Segments Left goes
from 1 to 0 and the destination becomes the receiving port, read by
tshark at t2), and a UDP-only ACL lets frames with a header chain pass,
which it can only do by walking the chain to UDP."""

from __future__ import annotations


import pytest

from cli_site import PREFIX, RUN_DIR, capture, clean_site, facing, remove_run_dir, tshark_fields, trial_json, v6bench  # noqa: F401
from v6bench.lab.emulated import state
from v6bench.lab.model.site import Site
from v6bench.core.ext_headers import PRESETS

pytestmark = [pytest.mark.netns, pytest.mark.usefixtures("clean_site", "remove_run_dir")]
SITE = Site(RUN_DIR, PREFIX)


def _trial(preset: str, *extra: str) -> dict:
    return trial_json("--mix", "0/100", "--frame-size", "1280", "--ext-headers", preset, "--rate", "2kfps", "--duration", "1", *extra)


def test_every_preset_crosses_the_router_and_the_srh_is_processed(tmp_path):
    up = v6bench("lab", "up", "--topology", "a", "--acl", "25", "--acl-udp-only")
    assert up.returncode == 0, up.stderr
    try:
        for preset in PRESETS:
            r = _trial(preset)
            assert r["lost_frames"] == 0 and r["rx_frames"] == 2000, (preset, r["lost_frames"], r["tester_limited_reasons"])
            assert r["dut"]["acl"]["r1"]["v6"] == {"permit": 2000, "deny": 0}, preset  # walked to UDP, permitted
        lab = state.load(SITE)
        pcap = tmp_path / "srh.pcap"
        with capture(*facing(lab, "t2"), pcap, 50, "ip6 and not icmp6"):
            r = _trial("srh")
        assert r["lost_frames"] == 0
        rows = tshark_fields(pcap, "ipv6.routing.segleft", "ipv6.dst", "ipv6.routing.type")
        assert rows and {tuple(x) for x in rows} == {("0", "2001:2:0:1::2", "4")}, rows[:3]
    finally:
        v6bench("lab", "down")
