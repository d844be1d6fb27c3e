"""RFC 4814 ports on the wire (``--ports``, core/frames.PORTS), as root,
on the tests' own lab site: by default every test frame of a stateless
path takes its own pseudorandom source and destination port (each value
once a cycle), flow 2 within its share of the source range, which a DUT
scenario scoped to flow 2 matches; through a DUT that keeps state the
ports stay fixed, and RFC 4814 ports are refused there."""

from __future__ import annotations

import pytest

from cli_site import PREFIX, RUN_DIR, capture, clean_site, remove_run_dir, trial_json, tshark_fields, v6bench  # noqa: F401
from v6bench.lab.emulated import state
from v6bench.lab.model.site import Site

pytestmark = [pytest.mark.netns, pytest.mark.usefixtures("clean_site", "remove_run_dir")]
SITE = Site(RUN_DIR, PREFIX)


def test_each_frame_has_its_own_ports_and_a_scoped_acl_still_finds_flow_2(tmp_path):
    up = v6bench("lab", "up", "--acl", "1", "--acl-family", "ipv6", "--scope", "flow2")
    assert up.returncode == 0, up.stderr
    try:
        r1 = state.load(SITE).node("r1")["netns"]
        pcap = tmp_path / "r1-t2.pcap"
        with capture(r1, "r1-t2", pcap, 2000, "udp"):
            res = trial_json("--mix", "50/50", "--frame-size", "128", "--rate", "1kfps", "--duration", "1",
                             "--flows", "2")
        assert res["lost_frames"] == 0 and res["rx_frames"] == 1000, res["tester_limited_reasons"]
        assert res["ports"]["used"] == "rfc4814" and res["ports"]["src"] == {"1": [1024, 49184], "2": [49185, 65534]}
        rows = tshark_fields(pcap, "ip.src", "ipv6.src", "udp.srcport", "udp.dstport")
        test = [r for r in rows if r[0] == "198.18.0.2" or r[1] == "2001:2::2"]
        assert len(test) == 1000, len(test)
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
    finally:
        v6bench("lab", "down")


def test_a_dut_that_keeps_state_gets_fixed_ports_and_refuses_rfc4814():
    res = trial_json("--nat44", "--mix", "100/0", "--frame-size", "128", "--rate", "1kfps", "--duration", "1")
    assert res["ports"] == {"asked": "auto", "used": "fixed"} and res["lost_frames"] == 0
    assert {(s["src_port"], s["dst_port"]) for s in res["engine"]["streams"]} == {(49184, 7)}
    r = v6bench("trial", "--nat44", "--ports", "rfc4814", "--mix", "100/0", "--rate", "1kfps", "--duration", "1")
    assert r.returncode == 2 and "--ports: RFC 4814 ports through a DUT that keeps state" in r.stderr, r.stderr
