"""A forwarding table in the emulated lab's routers (lab/emulated/fib_load.py), from
the command line on the tests' own lab site: 100 k prefixes a family
loaded into the router and counted back, the FIB learning time recorded,
and a trial whose frames walk the table's destinations through it, every
frame counted. (Every router on the path gets the table, each toward its
own next hop: tests/unit/test_fib_lab.py checks topology b's; one router
here keeps make test's time.)"""

from __future__ import annotations

import json
import subprocess

import pytest

from cli_site import PREFIX, clean_site, namespaces, remove_run_dir, trial_json, v6bench  # noqa: F401

pytestmark = [pytest.mark.netns, pytest.mark.usefixtures("clean_site", "remove_run_dir")]


def test_a_100k_table_loads_into_every_router_and_the_frames_walk_it():
    up = v6bench("lab", "up", "--topology", "a", "--table", "100k", "--destinations", "1000", timeout=300)
    assert up.returncode == 0, up.stderr
    st = json.loads(v6bench("lab", "status", "--json").stdout)
    fib = st["fib"]
    assert (fib["table"], fib["seed"], fib["destinations"]) == ("100k", 1, 1000)
    assert set(fib["routers"]) == {"r1"}
    for name, r in fib["routers"].items():
        assert (r["ipv4_routes"], r["ipv6_routes"]) == (100_000, 100_000), name
        assert 0 < r["load_s"] <= r["fib_learning_s"] < 300, r
        # The kernel itself holds them: count a family's routes through the table's nexthop object.
        ns = PREFIX + name
        for family, nhid in (("-4", "nhid 4000000"), ("-6", "nhid 6000000")):
            out = subprocess.run(["ip", "-n", ns, family, "route", "show"], capture_output=True, text=True, check=True,
                                 timeout=60).stdout
            assert sum(nhid in line for line in out.splitlines()) == 100_000, (name, family)
    assert "table: 100,000 IPv4 + 100,000 IPv6 routes" in v6bench("lab", "status").stdout
    r = trial_json("--mix", "50/50", "--frame-size", "128", "--rate", "4000fps", "--duration", "1", timeout=300)
    assert r["lab"]["fib"]["routers"]["r1"]["ipv4_routes"] == 100_000
    streams = r["engine"]["streams"]
    assert {s["name"] for s in streams} == {"ipv4-t1-t2", "ipv6-t1-t2"}
    for s in streams:
        # 2000 frames over 1000 destinations: each twice; beside them RFC 4814's ports, walked in the same permutation.
        assert s["walk"]["dst_ip"] == 1000 and s["walk"]["order"] == "permuted", s["walk"]
        assert (s["walk"]["src_port"], s["walk"]["dst_port"]) == (64512, 49151), s["walk"]
        assert s["tx_frames"] == 2000 and s["rx_frames"] == 2000 and s["lost_frames"] == 0, s
    dests = json.loads(open(fib["destinations_file"]).read())
    assert streams[0]["dst_ip"] in dests[str(streams[0]["ip_version"])], "a stream reports the walk's first destination"
    down = v6bench("lab", "down")
    assert down.returncode == 0 and not namespaces(), down.stderr
