"""A table in the emulated lab's routers, without a lab: where each router
sends the table (lab/emulated/fib_load.py), the batch it loads, the DUT option's
checks (lab/model/dut.py), and the walk a trial's frames then take
(trial/spec.py, the engine's own validator)."""

from __future__ import annotations

import dataclasses
import json
import subprocess

import pytest

from test_trial_spec import lab_of
from v6bench.core.errors import UsageError
from v6bench.fib.generate import Prefixes, Table
from v6bench.lab.emulated import fib_load
from v6bench.lab.model.dut import DutConfig
from v6bench.lab.model.site import Site
from v6bench.lab.interface import dut_config
from v6bench.lab.model.spec import DEFAULT
from v6bench.lab.model.topology import parse_topology
from v6bench.trial.request import make_request
from v6bench.trial.spec import engine_spec


def test_each_router_on_the_path_sends_the_table_toward_t2():
    assert fib_load.hops(parse_topology("a")) == [fib_load.Hop("r1", "r1-t2", "198.19.0.2", "2001:2:0:1::2")]
    b = fib_load.hops(parse_topology("b"))
    assert [(h.router, h.ipv4, h.ipv6) for h in b] == [("r1", "198.18.11.2", "2001:2:0:11::2"),
                                                         ("r2", "198.19.0.2", "2001:2:0:1::2")]


def test_the_batch_holds_a_nexthop_a_family_and_a_route_a_prefix(tmp_path):
    """The nexthop objects are each router's own; the route file is the
    same for every router (the routes name only the objects), written once
    and padded with empty lines, which ``ip -batch`` skips, to whole sectors
    (a VM router reads it as a disk)."""
    table = Table(Prefixes(4, ((0x01000000, 24), (0x0A000000, 8))), Prefixes(6, ((0x2A00 << 112, 32),)), "t")
    assert fib_load.nexthop_lines(fib_load.Hop("r1", "r1-t2", "198.19.0.2", "2001:2:0:1::2")).splitlines() == [
        "nexthop replace id 4000000 via 198.19.0.2 dev r1-t2",
        "nexthop replace id 6000000 via 2001:2:0:1::2 dev r1-t2",
    ]
    site = Site(run_dir=tmp_path, netns_prefix="v6t-")
    path = fib_load.routes_file(site, "mine", 7, table)
    data = path.read_bytes()
    assert len(data) % fib_load.SECTOR_BYTES == 0 and data.rstrip(b"\n").decode().splitlines() == [
        "route replace 1.0.0.0/24 nhid 4000000",
        "route replace 10.0.0.0/8 nhid 4000000",
        "route replace 2a00::/32 nhid 6000000",
    ]
    assert path == fib_load.routes_path(site, "mine", 7) and fib_load.routes_file(site, "mine", 7) == path


def test_the_table_option_is_checked_and_recorded_only_when_given():
    assert "table" not in DutConfig().to_json() and DutConfig() == DutConfig.from_json(DutConfig().to_json())
    t = DutConfig(table="10k", destinations=100)
    assert DutConfig.from_json(t.to_json()) == t and t.to_json()["table"] == "10k"
    assert "table 10k (seed 1" in t.describe() and "100 of its prefixes a family" in t.describe()
    for kw, field in (({"table": "2m"}, "table"), ({"table": "10k", "destinations": 10_001}, "destinations"),
                      ({"table": "10k", "destinations": 0}, "destinations"), ({"table": "10k", "table_seed": -1}, "table_seed")):
        with pytest.raises(UsageError) as e:
            DutConfig(**kw)
        assert e.value.field == (field,)
    assert dut_config({"table": "10k"}, dataclasses.replace(DEFAULT, lab_kind="vm")).table == "10k"  # VM routers too


def test_t1_s_frames_walk_the_table_s_destinations(engine_bin, tmp_path):
    """Every stream from t1 walks its family's destinations (both flows);
    frames from t2 and ICMP Echo do not; the engine accepts the spec, whose
    addresses leave the benchmarking blocks only on such a lab."""
    dests = tmp_path / "d.json"
    dests.write_text(json.dumps({"4": ["1.2.3.4", "100.64.0.9"], "6": ["2a00::1", "2c0f:f000::7"]}))
    lab = dataclasses.replace(lab_of("a"), fib={"seed": 5, "destinations_file": str(dests)})
    assert lab.allow_other_addresses and not lab_of("a").allow_other_addresses
    req = make_request("50/50", 128, "10kfps", 1, True, flows=2)
    spec = engine_spec(lab, req, req.check_on_lab(lab.topology, lab.link_speed_bps, lab.mtu, None)).to_json()
    walked = {s["name"]: s.get("walk") for s in spec["streams"]}
    # With RFC 4814 ports (the default) the destinations' walk also walks each flow's ports, in its permutation.
    ports = {"dst_port": ["1-49151"], "order": "permuted", "seed": 5}
    assert walked["ipv4-t1-t2"] == {"dst_ip": ["1.2.3.4", "100.64.0.9"], "src_port": ["1024-49184"], **ports}
    assert walked["ipv4-t1-t2-flow2"] == {"dst_ip": ["1.2.3.4", "100.64.0.9"], "src_port": ["49185-65534"], **ports}
    assert walked["ipv6-t1-t2"]["dst_ip"] == ["2a00::1", "2c0f:f000::7"]
    assert "dst_ip" not in walked["ipv4-t2-t1"] and "dst_ip" not in walked["ipv6-t2-t1-flow2"]
    fixed = make_request("50/50", 128, "10kfps", 1, True, flows=2, ports="fixed")
    spec_fixed = engine_spec(lab, fixed, fixed.check_on_lab(lab.topology, lab.link_speed_bps, lab.mtu, None)).to_json()
    walked = {s["name"]: s.get("walk") for s in spec_fixed["streams"]}
    assert walked["ipv4-t1-t2"] == walked["ipv4-t1-t2-flow2"] == {"dst_ip": ["1.2.3.4", "100.64.0.9"], "order": "permuted", "seed": 5}
    assert walked["ipv4-t2-t1"] is None and walked["ipv6-t2-t1-flow2"] is None
    assert spec["allow_non_benchmarking_addresses"] is True
    p = subprocess.run([str(engine_bin), "check", "--spec", "-"], input=json.dumps(spec), capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stderr
    with pytest.raises(UsageError, match="routing header"):
        r = make_request("0/100", 512, "1kfps", 1, False, "srh")
        engine_spec(lab, r, r.check_on_lab(lab.topology, lab.link_speed_bps, lab.mtu, None))


def test_an_external_router_is_given_a_table_only_where_its_file_allows_it(tmp_path):
    """Without ``[table] allow_full_table = true`` the lab file's DUT is
    not told a table (the error says how to allow it); with it, the table,
    its seed and the destinations are taken, and nothing else of [dut]."""
    from test_external_lab import MINIMAL
    from v6bench.lab.interface import lab_spec

    (tmp_path / "lab.toml").write_text(MINIMAL)
    lab = lab_spec({"file": str(tmp_path / "lab.toml")}, None)
    with pytest.raises(UsageError, match="allow_full_table = true") as e:
        dut_config({"table": "internet"}, lab)
    assert e.value.field == ("table",)
    assert dut_config({"table": "none"}, lab).table == "none"
    (tmp_path / "lab.toml").write_text(MINIMAL + "\n[table]\nallow_full_table = true\npeer_as = 65001\n")
    lab = lab_spec({"file": str(tmp_path / "lab.toml")}, None)
    dut = dut_config({"table": "10k", "table_seed": 3, "destinations": 500}, lab)
    assert (dut.table, dut.table_seed, dut.destinations) == ("10k", 3, 500)
    t = lab.lab_file.table
    assert (t.local_as, t.peer_as, t.speaker_ipv4, t.speaker_ipv6, t.peer_ipv4, t.peer_ipv6) == \
        (4_200_000_001, 65001, "198.19.0.3/24", "2001:2:0:1::3/64", "198.19.0.1", "2001:2:0:1::1")
    with pytest.raises(UsageError, match="dut.apply") as e:
        dut_config({"table": "10k", "acl": 10}, lab)
    assert e.value.field == ("acl",)


def test_the_warm_up_grows_with_the_table():
    from v6bench.trial.warmup import warmup_s

    def fib(v4: int, v6: int) -> dict:
        return {"routers": {"r1": {"ipv4_routes": v4, "ipv6_routes": v6}, "r2": {"ipv4_routes": 0, "ipv6_routes": 0}}}
    assert [warmup_s(fib(*n)) for n in ((10_000, 10_000), (100_000, 100_000), (1_000_000, 230_000), (1_000_000, 1_000_000))] \
        == [1.0, 1.6, 10.0, 10.0]


def test_a_namespace_helper_waits_out_the_kernel_freeing_a_big_table():
    """After a namespace holding millions of routes goes, the kernel frees
    them under the lock a new namespace needs: fib-scale's full run
    (2026-11-29) failed at pyroute2's default 2-s wait after 23 lab builds.
    The lab's plumbing waits longer, still bounded."""
    import pyroute2.config

    from v6bench.lab.machine import nsctl

    assert pyroute2.config.default_communicate_timeout == nsctl.pr_config.default_communicate_timeout >= 60
