"""The BGP speaker's configuration and what it reads of BIRD
(lab/external/bgp_speaker.py), without a namespace: the configuration is checked by
BIRD's own parser (``bird -p``), the session's state against BIRD 2.0.12's
output."""

from __future__ import annotations

import subprocess

from test_external_lab import MINIMAL
from v6bench.lab.external import bgp_speaker
from v6bench.lab.external import lab_file as external_spec
from v6bench.lab.model.site import Site

LAB = MINIMAL + "[table]\nallow_full_table = true\npeer_as = 65002\nhold_time_s = 90\n"


#: ``birdc show protocols all dut6`` of an established session (BIRD 2.0.12, Debian 12), shortened.
ESTABLISHED = """\
BIRD 2.0.12 ready.
Name       Proto      Table      State  Since         Info
dut6       BGP        ---        up     18:46:21.099  Established
  BGP state:          Established
    Neighbor address: 2001:2:0:1::1
    Neighbor AS:      4200000002
    Local AS:         4200000001
    Session:          external AS4
    Source address:   2001:2:0:1::3
    Hold timer:       29.463/30
    Keepalive timer:  9.759/10
  Channel ipv6
    State:          UP
    Table:          master6
    Routes:         0 imported, 10000 exported, 0 preferred
"""

#: ``show protocols all dut4`` with no BGP daemon at the DUT's address (BIRD 2.0.12), shortened.
ACTIVE = """\
BIRD 2.0.12 ready.
Name       Proto      Table      State  Since         Info
dut4       BGP        ---        start  18:47:00.485  Active        Socket: Connection refused
  BGP state:          Active
    Neighbor address: 198.19.0.1
    Neighbor AS:      4200000002
    Local AS:         4200000001
    Connect delay:    0.350/1
    Last error:       Socket: Connection refused
  Channel ipv4
    State:          DOWN
    Table:          master4
"""


def test_the_session_state_exported_routes_and_last_error_are_read_from_birds_output():
    assert bgp_speaker.parse_protocol(ESTABLISHED, "dut6") == {"state": "Established", "exported": 10000,
                                                               "note": "Established"}
    assert bgp_speaker.parse_protocol(ACTIVE, "dut4") == {"state": "Active", "exported": 0,
                                                          "note": "Socket: Connection refused"}


def test_the_configuration_announces_the_table_via_t2_and_bird_parses_it(tmp_path):
    (tmp_path / "lab.toml").write_text(LAB)
    spec = external_spec.load(tmp_path / "lab.toml")
    site = Site(tmp_path / "run", "v6u-")
    (site.run_dir / "tables").mkdir(parents=True)
    (site.run_dir / "tables" / "mine-seed1.txt").write_text(
        "# a table of three\n203.0.113.0/24\n198.51.100.0/22\n2001:db8:1::/48\n")
    routes = {v: bgp_speaker.route_file(site, "mine", 1, v, nh) for v, nh in ((4, "198.19.0.2"), (6, "2001:2:0:1::2"))}
    assert routes[4].read_text() == "route 198.51.100.0/22 via 198.19.0.2;\nroute 203.0.113.0/24 via 198.19.0.2;\n"
    assert routes[6].read_text() == "route 2001:db8:1::/48 via 2001:2:0:1::2;\n"
    text = bgp_speaker.config(spec, routes, tmp_path / "bird.log")
    for line in ("router id 198.19.0.3;", "  local 198.19.0.3 as 4200000001;", "  neighbor 198.19.0.1 as 65002;",
                 "  local 2001:2:0:1::3 as 4200000001;", "  neighbor 2001:2:0:1::1 as 65002;", "  hold time 90;",
                 "  ipv4 { import none; export all; next hop keep; };", f'include "{routes[6]}";'):
        assert line in text.splitlines(), line
    assert "kernel" not in text  # the speaker changes no forwarding table of this machine
    conf = tmp_path / "bird.conf"
    conf.write_text(text)
    bird, _ = bgp_speaker.binaries()
    p = subprocess.run([bird, "-p", "-c", str(conf)], capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stderr


def test_lab_check_says_what_the_dut_would_be_told_or_that_no_table_is_allowed(tmp_path):
    (tmp_path / "lab.toml").write_text(LAB)
    told = bgp_speaker.describe(external_spec.load(tmp_path / "lab.toml"))
    assert "198.19.0.3/24 and 2001:2:0:1::3/64, AS 4200000001" in told and "AS 65002" in told
    assert "next hop t2 (198.19.0.2, 2001:2:0:1::2)" in told and "withdrawn" in told
    (tmp_path / "lab.toml").write_text(LAB.split("[table]")[0])
    assert "allow_full_table = true" in bgp_speaker.describe(external_spec.load(tmp_path / "lab.toml"))
