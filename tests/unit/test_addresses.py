"""Many addresses (trial/addresses.py, core/frames.Traffic.addresses): the
ranges every lab routes, the walks of t1's and t2's frames (checked by the
engine's validator), the distinct flows counted from what the engine
walked, and what is refused."""

import dataclasses

import pytest

from v6bench.core.errors import UsageError
from v6bench.core.frames import Traffic, check as check_traffic, parse_mix
from v6bench.lab.model.dut import DutConfig
from v6bench.lab.model.topology import DESTINATIONS, SOURCES, parse_topology
from v6bench.trial import addresses
from v6bench.trial.request import make_request
from v6bench.trial.spec import engine_spec

from test_trial_spec import check, lab_of


@pytest.mark.parametrize("topology", ["a", "b", "chain:3", "mesh:4"])
def test_every_router_routes_the_sources_toward_t1_and_the_destinations_toward_t2(topology):
    topo = parse_topology(topology)
    path = topo.path("t1", "t2")
    for k, name in enumerate(path[1:-1], start=1):
        routes = {r.dst: r.gateway for r in topo.node(name).routes}
        toward_t1 = [i for i in topo.node(path[k - 1]).interfaces if i.peer_node == name][0]
        toward_t2 = [i for i in topo.node(path[k + 1]).interfaces if i.peer_node == name][0]
        assert routes[str(SOURCES.ipv4)] == toward_t1.ipv4.split("/")[0]
        assert routes[str(SOURCES.ipv6)] == toward_t1.ipv6.split("/")[0]
        assert routes[str(DESTINATIONS.ipv4)] == toward_t2.ipv4.split("/")[0]
        assert routes[str(DESTINATIONS.ipv6)] == toward_t2.ipv6.split("/")[0]


def test_t1_walks_n_sources_to_n_destinations_and_t2_back(engine_bin):
    req = dataclasses.replace(make_request("50/50", 128, "10kfps", 2, True, addresses=300), order_seed=5)
    spec = engine_spec(lab_of("a"), req, 10_000)
    walks = {s.name: s.walk for s in spec.streams}
    assert walks["ipv4-t1-t2"].src_ip == ("198.18.128.0-198.18.129.43",)
    assert walks["ipv4-t1-t2"].dst_ip == ("198.19.128.0-198.19.129.43",)
    assert walks["ipv6-t2-t1"].src_ip == ("2001:2:0:9000::-2001:2:0:9000::12b",)
    assert walks["ipv6-t2-t1"].dst_ip == ("2001:2:0:8000::-2001:2:0:8000::12b",)
    assert {w.order for w in walks.values()} == {"permuted"} and {w.seed for w in walks.values()} == {5}
    assert all(w.src_port and w.dst_port for w in walks.values()), "RFC 4814's ports walk beside them"
    planned = check(engine_bin, spec.to_json())
    assert {s["name"] for s in planned["streams"]} == set(walks)
    assert addresses.record(300)["sources_ipv4"] == "198.18.128.0-198.18.129.43"


def test_distinct_flows_are_the_walks_least_common_multiple_or_the_frames():
    walked = {"src_ip": 300, "dst_ip": 300, "src_port": 64512, "dst_port": 49151}
    assert addresses.distinct_flows({"tx_frames": 10_000, "walk": walked}) == 10_000
    assert addresses.distinct_flows({"tx_frames": 10_000, "walk": {"src_ip": 300, "dst_ip": 300}}) == 300
    assert addresses.distinct_flows({"tx_frames": 10_000, "walk": {"src_port": 4, "dst_port": 6}}) == 12
    assert addresses.distinct_flows({"tx_frames": 5, "walk": None}) is None


@pytest.mark.parametrize("dut,words", [
    (DutConfig(nat44=True), "not through a DUT that keeps state"),
    (DutConfig(nat64="stateless"), "a NAT64"),
    (DutConfig(table="10k"), "a table"),
])
def test_many_addresses_are_refused_where_they_would_not_be_routed_or_kept(dut, words):
    lab = dataclasses.replace(lab_of("a"), dut_config=dut)
    with pytest.raises(UsageError, match=words) as e:
        make_request("100/0", 128, "10kfps", 2, False, addresses=16).check_on_lab(
            lab.topology, lab.link_speed_bps, lab.mtu, None, dut)
    assert e.value.field == ("addresses",)


@pytest.mark.parametrize("n,kw,words", [
    (0, {}, "outside 1..32,768"),
    (32_769, {}, "outside 1..32,768"),
    (2.5, {}, "a whole number"),
    (16, {"icmp_echo": "far"}, "not ICMP echo"),
])
def test_the_addresses_key_is_checked(n, kw, words):
    with pytest.raises(UsageError, match=words) as e:
        check_traffic(Traffic(addresses=n, **kw), parse_mix("100/0"), 128, False)
    assert e.value.field == ("addresses",)
    assert Traffic(addresses=16).frames_json()["addresses"] == 16 and "addresses" not in Traffic().frames_json()
    assert Traffic.from_json(Traffic(addresses=16).to_json()).addresses == 16
