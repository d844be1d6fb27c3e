"""Tunnels between R1 and R2 on topology b (seed 003 Table 2), as root, on
the tests' own lab site: test traffic crosses both ways with nothing lost,
and a capture on the R1–R2 link (tshark, in R2's namespace) shows every
frame of the carried version encapsulated and the other version native."""

from __future__ import annotations

import json

import pytest

from cli_site import PREFIX, RUN_DIR, capture, clean_site, remove_run_dir, tshark_fields, trial_json, v6bench  # noqa: F401
from v6bench.lab import state
from v6bench.lab.site import Site

pytestmark = [pytest.mark.netns, pytest.mark.usefixtures("clean_site", "remove_run_dir")]
SITE = Site(RUN_DIR, PREFIX)


@pytest.mark.parametrize("tunnel", ["4in6", "6in4"])
def test_the_tunnel_link_carries_encapsulated_frames(tmp_path, tunnel):
    up = v6bench("lab", "up", "--topology", "b", "--tunnel", tunnel)
    assert up.returncode == 0, up.stderr
    try:
        lab = state.load(SITE)
        r2 = lab.node("r2")
        pcap = tmp_path / "core.pcap"
        with capture(r2["netns"], "r2-r1", pcap, 400):
            res = trial_json("--mix", "50/50", "--frame-size", "256", "--rate", "1kfps", "--duration", "1", "--bidirectional")
        assert res["lost_frames"] == 0 and res["rx_frames"] == 2000, (res["lost_frames"], res["tester_limited_reasons"])
        # The namespace routers' tunnel is a stand-in (this kernel has no sit or ip6tnl), and says so.
        st = json.loads(v6bench("lab", "status", "--json").stdout)
        assert st["tunnel"]["kind"] == tunnel and st["tunnel"]["stand_in"] is True, st["tunnel"]
        assert res["lab"]["tunnel"] == st["tunnel"]
        rows = tshark_fields(pcap, "ip.dst", "ipv6.dst", "udp.dstport", options=("-E", "occurrence=a", "-E", "aggregator=,"))
        addrs = ("198.19.0.2", "2001:2:0:1::2", "198.18.0.2", "2001:2::2")
        test = [x for x in rows if any(a in "\t".join(x) for a in addrs)]
        assert len(test) > 100, rows[:5]
        for ip4, ip6, ports in test:
            if tunnel == "4in6" and ip4:  # an IPv4 test frame: inside an outer IPv6 header to a SID
                assert ip6 in ("2001:2:0:f4::1", "2001:2:0:f4::2"), (ip4, ip6, ports)
            if tunnel == "6in4" and ip6 and ports.split(",")[-1] in ("7", "49184"):  # an IPv6 test frame: in VXLAN
                assert ip4 in ("198.18.11.1", "198.18.11.2") and ports.startswith("4789,"), (ip4, ip6, ports)
        carried = [t for t in test if (t[0] and t[1])]
        assert len(carried) > 50, "the carried version crossed the link encapsulated"
    finally:
        v6bench("lab", "down")
