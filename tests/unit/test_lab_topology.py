"""Topologies as graphs: names, addresses, routes (no root)."""

import ipaddress

import pytest

from v6bench.core.errors import UsageError
from v6bench.lab.model.topology import parse_topology


def _iface_net(addr: str):
    return ipaddress.ip_interface(addr).network


@pytest.mark.parametrize("name,nodes", [
    ("p2p", ["t1", "t2"]), ("a", ["t1", "r1", "t2"]), ("b", ["t1", "r1", "r2", "t2"]),
    ("chain:1", ["t1", "r1", "t2"]), ("chain:5", ["t1", "r1", "r2", "r3", "r4", "r5", "t2"]),
])
def test_nodes_and_interface_names(name, nodes):
    t = parse_topology(name)
    assert [n.name for n in t.nodes] == nodes
    for left, right in t.links():
        assert left.name == f"{left.node}-{right.node}" and right.name == f"{right.node}-{left.node}"
        assert len(left.name) <= 15
        assert _iface_net(left.ipv4) == _iface_net(right.ipv4)
        assert _iface_net(left.ipv6) == _iface_net(right.ipv6)


def test_topology_a_addressing_follows_rfc_2544_app_c():
    t = parse_topology("a")
    r1 = t.node("r1")
    assert [(i.name, i.ipv4, i.ipv6) for i in r1.interfaces] == [
        ("r1-t1", "198.18.0.1/24", "2001:2::1/64"), ("r1-t2", "198.19.0.1/24", "2001:2:0:1::1/64")]
    assert t.node("t1").interfaces[0].ipv4 == "198.18.0.2/24"
    assert t.gateway("t1") == ("198.18.0.1", "2001:2::1")
    assert t.gateway("t2") == ("198.19.0.1", "2001:2:0:1::1")
    # Only the ranges of many addresses (trial/addresses.py): every tester link is r1's own.
    assert {(r.dst, r.gateway) for r in r1.routes} == {
        ("198.18.128.0/17", "198.18.0.2"), ("2001:2:0:8000::/64", "2001:2::2"),
        ("198.19.128.0/17", "198.19.0.2"), ("2001:2:0:9000::/64", "2001:2:0:1::2")}


@pytest.mark.parametrize("name", ["p2p", "a", "b", "chain:3", "chain:5"])
def test_every_address_is_in_the_benchmarking_blocks(name):
    v4, v6 = ipaddress.ip_network("198.18.0.0/15"), ipaddress.ip_network("2001:2::/48")
    for n in parse_topology(name).nodes:
        for i in n.interfaces:
            assert ipaddress.ip_interface(i.ipv4).ip in v4
            assert ipaddress.ip_interface(i.ipv6).ip in v6


@pytest.mark.parametrize("name", ["b", "chain:3", "chain:5"])
def test_static_routes_deliver_between_the_testers(name):
    """Walk hop by hop from r1 to t2's subnet and from the last router to
    t1's subnet, for both families, using only the computed routes."""
    t = parse_topology(name)
    by_addr = {i.ipv4.split("/")[0]: n for n in t.nodes for i in n.interfaces}
    by_addr.update({i.ipv6.split("/")[0]: n for n in t.nodes for i in n.interfaces})

    def walk(start, dst_ip):
        node, hops = start, 0
        while hops < 10:
            if any(ipaddress.ip_address(dst_ip) in _iface_net(getattr(i, "ipv4" if ":" not in dst_ip else "ipv6"))
                   for i in node.interfaces):
                return hops
            routes = [r for r in node.routes if ipaddress.ip_address(dst_ip) in ipaddress.ip_network(r.dst)]
            assert len(routes) == 1, f"{node.name} has no single route to {dst_ip}"
            node, hops = by_addr[routes[0].gateway], hops + 1
        raise AssertionError("routing loop")

    n_routers = len(t.routers)
    assert walk(t.node("r1"), "198.19.0.2") == n_routers - 1
    assert walk(t.node("r1"), "2001:2:0:1::2") == n_routers - 1
    assert walk(t.routers[-1], "198.18.0.2") == n_routers - 1
    assert walk(t.routers[-1], "2001:2::2") == n_routers - 1


def test_p2p_testers_share_one_subnet():
    t = parse_topology("p2p")
    assert t.gateway("t1") == ("198.18.0.3", "2001:2::3")
    assert t.gateway("t2") == ("198.18.0.2", "2001:2::2")


@pytest.mark.parametrize("bad", ["c", "chain:0", "chain:6", "chain:x", "", "mesh:3", "mesh:9", "mesh:x"])
def test_unknown_topologies_are_refused(bad):
    with pytest.raises(UsageError, match="^topology: "):
        parse_topology(bad)


def test_mesh_puts_n_testers_on_one_router_with_topology_a_inside():
    t = parse_topology("mesh:5")
    assert [n.name for n in t.testers] == ["t1", "t2", "t3", "t4", "t5"]
    assert [n.name for n in t.routers] == ["r1"]
    assert t.path() == ["t1", "r1", "t2"] and t.path("t5", "t3") == ["t5", "r1", "t3"]
    a = parse_topology("a")
    assert t.node("t1").interfaces == a.node("t1").interfaces and t.node("t2").interfaces == a.node("t2").interfaces
    (t3,) = t.node("t3").interfaces
    assert (t3.name, t3.ipv4, t3.ipv6) == ("t3-r1", "198.18.33.2/24", "2001:2:0:33::2/64")
    assert t.gateway("t5") == ("198.18.35.1", "2001:2:0:35::1")
    assert len(t.links()) == 5 and t.node("r1").routes == a.node("r1").routes  # every tester link is r1's
    assert parse_topology("b").path() == ["t1", "r1", "r2", "t2"] and parse_topology("p2p").path() == ["t1", "t2"]
