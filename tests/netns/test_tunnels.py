"""Tunnels between R1 and R2 on topology b (seed 003 Table 2), as root, on
the tests' own lab site: test traffic crosses both ways with nothing lost,
and a capture on the R1–R2 link (tshark, in R2's namespace) shows every
frame of the carried version encapsulated and the other version native;
scoped to flow 2 (``--scope flow2``), only the carried version's second
flow is encapsulated and its first crosses the bare link beside it."""

from __future__ import annotations

import json

import pytest

from cli_site import PREFIX, RUN_DIR, capture, clean_site, remove_run_dir, tshark_fields, trial_json, v6bench  # noqa: F401
from v6bench.lab.emulated import state
from v6bench.lab.model.site import Site

pytestmark = [pytest.mark.netns, pytest.mark.usefixtures("clean_site", "remove_run_dir")]
SITE = Site(RUN_DIR, PREFIX)


@pytest.mark.parametrize("tunnel,scope", [("4in6", "all"), ("6in4", "flow2")])
def test_the_tunnel_link_carries_encapsulated_frames(tmp_path, tunnel, scope):
    up = v6bench("lab", "up", "--topology", "b", "--tunnel", tunnel, "--scope", scope)
    assert up.returncode == 0, up.stderr
    try:
        lab = state.load(SITE)
        r2 = lab.node("r2")
        pcap = tmp_path / "core.pcap"
        flows = ("--flows", "2") if scope == "flow2" else ()
        with capture(r2["netns"], "r2-r1", pcap, 400):
            # Fixed ports: the capture tells test frames by port 7 and flow 2 by its one port (test_ports.py walks them).
            res = trial_json("--mix", "50/50", "--frame-size", "256", "--rate", "1kfps", "--duration", "1", "--bidirectional",
                             "--ports", "fixed", *flows)
        assert res["lost_frames"] == 0 and res["rx_frames"] == 2000, (res["lost_frames"], res["tester_limited_reasons"])
        # The namespace routers' tunnel is a stand-in (this kernel has no sit or ip6tnl), and says so.
        st = json.loads(v6bench("lab", "status", "--json").stdout)
        assert st["tunnel"]["kind"] == tunnel and st["tunnel"]["stand_in"] is True, st["tunnel"]
        assert res["lab"]["tunnel"] == st["tunnel"]
        # udp.port: each UDP header's source and destination port, the outer (VXLAN's) before the test frame's.
        rows = tshark_fields(pcap, "ip.dst", "ipv6.dst", "udp.port", options=("-E", "occurrence=a", "-E", "aggregator=,"))
        addrs = ("198.19.0.2", "2001:2:0:1::2", "198.18.0.2", "2001:2::2")
        test = [x for x in rows if any(a in "\t".join(x) for a in addrs)]
        assert len(test) > 100, rows[:5]
        for ip4, ip6, ports in test:
            if tunnel == "4in6" and ip4:  # an IPv4 test frame: inside an outer IPv6 header to a SID
                assert ip6 in ("2001:2:0:f4::1", "2001:2:0:f4::2"), (ip4, ip6, ports)
            inner = ports.split(",")[-2:]  # the test frame's own ports
            if tunnel == "6in4" and ip6 and "7" in inner:  # an IPv6 test frame: in VXLAN, or (scoped, flow 1) bare
                encapsulated = bool(ip4) and "4789" in ports.split(",")[:2]
                flow2 = "49185" in inner  # core/frames.FLOW_SRC_PORT[2]
                assert encapsulated == (scope == "all" or flow2), (ip4, ip6, ports)
        carried = [t for t in test if (t[0] and t[1])]
        assert len(carried) > 50 if scope == "all" else 50 < len(carried) < len(test) / 2, \
            "the carried version crossed the link encapsulated"
        if scope == "flow2":
            native6 = [t for t in test if t[1] and not t[0]]
            assert len(native6) > 50, "flow 1 of the carried version crossed the bare link"
    finally:
        v6bench("lab", "down")
