"""Router data planes (lab/dataplanes/): chosen by ``[lab] data_plane``,
checked against the routers and the DUT configuration before any lab, their
counts read from the kernel's and bpftool's own output, set beside the
engine's; a new data plane is its folder and one registry line."""

from __future__ import annotations

import pytest

from test_layers import python_imports

from v6bench.core.errors import UsageError
from v6bench.lab import backends, interface
from v6bench.lab.dataplanes import registry
from v6bench.lab.dataplanes.flowtable import plane as flowtable_plane
from v6bench.lab.dataplanes.kernel.plane import forwarded
from v6bench.lab.dataplanes.protocol import COUNTS, DataPlane
from v6bench.lab.dataplanes.ovs import flows as ovs_flows
from v6bench.lab.dataplanes.ovs.plane import ingress_ruleset, n_packets
from v6bench.lab.dataplanes.xdp.plane import map_counts
from v6bench.lab.emulated.plane_host import over_trial
from v6bench.lab.emulated.state import LabState
from v6bench.lab.model.cpus import plan
from v6bench.lab.model.dut import DutConfig
from v6bench.lab.model.spec import lab_spec

# /proc/net/snmp and /proc/net/snmp6 as a namespace of this machine's 6.18 prints them (abridged: the rows read).
SNMP = """Ip: Forwarding DefaultTTL InReceives InHdrErrors InAddrErrors ForwDatagrams InUnknownProtos InDiscards
Ip: 1 64 299949 0 0 299940 0 0
Icmp: InMsgs InErrors
Icmp: 0 0
Ip6InReceives                   	300012
Ip6OutForwDatagrams             	299949
Ip6InDelivers                   	3
"""


def test_the_kernel_counts_what_it_forwarded_per_family():
    assert forwarded(SNMP) == (299940, 299949)
    with pytest.raises(ValueError, match="Ip6OutForwDatagrams"):
        forwarded(SNMP.replace("Ip6OutForwDatagrams", "Ip6OutOther"))


def test_the_xdp_counters_are_summed_over_cpus_with_or_without_btf():
    formatted = [{"key": ["0x00", "0x00", "0x00", "0x00"], "values": [],
                  "formatted": {"key": 0, "values": [{"cpu": 0, "value": 3}, {"cpu": 1, "value": 149997}]}}]
    raw = [{"key": ["0x01", "0x00", "0x00", "0x00"],
            "values": [{"cpu": 0, "value": ["0x02", "0x01", "0", "0", "0", "0", "0", "0"]},
                       {"cpu": 1, "value": ["0x01", "0", "0", "0", "0", "0", "0", "0"]}]}]
    assert map_counts(formatted) == {0: 150000}
    assert map_counts(raw) == {1: 0x0102 + 1}


def test_a_data_plane_is_a_lab_key_of_a_topology_with_routers():
    assert lab_spec({}).data_plane == "kernel"
    assert lab_spec({"data_plane": "xdp"}).data_plane == "xdp"
    with pytest.raises(UsageError) as e:
        lab_spec({"topology": "p2p", "data_plane": "xdp"})
    assert e.value.field == ("data_plane",)
    with pytest.raises(UsageError):
        lab_spec({"data_plane": 3})


def test_a_data_plane_is_checked_before_any_lab_with_the_dut_it_would_carry():
    ns = backends.REGISTRY["ns"]
    assert ns.dut_config({"table": "10k"}, lab_spec({"data_plane": "xdp"})).table == "10k"
    with pytest.raises(UsageError, match="'vpp' is not one of kernel, xdp, ovs") as e:
        ns.dut_config({}, lab_spec({"data_plane": "vpp"}))
    assert e.value.field == ("data_plane",)
    with pytest.raises(UsageError, match=r"cannot carry acl = 1: .*data_plane = \"kernel\" can") as e:
        ns.dut_config({"acl": 1}, lab_spec({"data_plane": "xdp"}))
    assert e.value.field == ("acl",) and "\n" not in e.value.message
    for key, value in (("nat44", True), ("shape", True), ("limit_fps", 1000), ("rps", "all")):
        with pytest.raises(UsageError, match=f"cannot carry {key}"):
            registry.check("xdp", "ns", ns.dut_config({key: value}, lab_spec({})))
    for plane in ("flowtable", "ovs-kernel"):
        with pytest.raises(UsageError, match="runs on vm routers, not ns"):
            backends.REGISTRY["ns"].dut_config({}, lab_spec({"data_plane": plane}))
    # The kernel carries every configuration.
    registry.check("kernel", "vm", ns.dut_config({"acl": 25, "acl_at": "both", "nat44": True}, lab_spec({})))


def test_every_data_plane_says_what_it_is_and_counts_the_same_things():
    assert registry.REGISTRY[registry.DEFAULT].name == registry.DEFAULT
    for name, plane in registry.REGISTRY.items():
        assert plane.name == name and plane.summary and plane.router_kinds
        assert set(plane.router_kinds) <= set(backends.REGISTRY)
        assert all(callable(getattr(plane, m)) for m in vars(DataPlane) if not m.startswith("_"))
        assert plane.record()["name"] == name
    assert interface.data_planes()["xdp"].startswith("an XDP forwarder")


def test_the_lab_state_keeps_its_data_plane():
    lab = LabState.from_json({"state_version": 1, "topology": "a", "link_speed_bps": 1e9, "mtu": 1500,
                              "status": "up", "temporary": False, "owner_pid": 1, "created_at_unix_s": 0.0,
                              "cpu_plan": plan("inline").to_json(),
                              "nodes": [], "napi": [], "sysctls": {}, "kernel": "6.18", "data_plane": "xdp"})
    assert lab.data_plane == "xdp" and LabState.from_json(lab.to_json()) == lab


def test_the_data_plane_counts_are_set_beside_the_engine_frames():
    counts = {"forwarded_ipv4_frames": 50000, "forwarded_ipv6_frames": 49998, "slow_path_frames": 2}
    eng = {"streams": [{"ip_version": 4, "rx_frames": 50000}, {"ip_version": 6, "rx_frames": 49995},
                       {"ip_version": 6, "rx_ip_version": 4, "rx_frames": 0}]}
    before = {"r1": {"forwarded_ipv4_frames": 7, "forwarded_ipv6_frames": 9, "slow_path_frames": 1}}
    after = {"r1": {k: n + before["r1"][k] for k, n in counts.items()}}
    out = over_trial("xdp", before, after, eng)
    assert out["name"] == "xdp" and out["routers"]["r1"]["slow_path_frames"] == 2
    assert out["engine_rx_ipv4_frames"] == 50000 and out["engine_rx_ipv6_frames"] == 49995
    assert out["routers"]["r1"]["beyond_engine_ipv4_frames"] == 0
    assert out["routers"]["r1"]["beyond_engine_ipv6_frames"] == 3
    assert set(COUNTS) <= set(out["routers"]["r1"])
    # A router reset during the trial counts from 0 again: its counts over the trial are unknown.
    assert over_trial("kernel", after, before, eng)["routers"] == {"r1": {"restarted": True}}


def test_a_new_data_plane_is_its_folder_and_one_registry_line(monkeypatch):
    # Outside lab/dataplanes/, nothing imports a data plane's folder: the registry is where a new one is named.
    folders = {"kernel", "xdp", "ovs", "flowtable"}

    def plane_folder(module: str) -> str | None:
        parts = module.split(".")
        return parts[3] if len(parts) > 4 and parts[:3] == ["v6bench", "lab", "dataplanes"] else None

    found = {mod: sorted(t for t in targets if plane_folder(t) in folders)
             for mod, targets in python_imports().items()
             if not mod.startswith("v6bench.lab.dataplanes.")}
    assert {m: t for m, t in found.items() if t} == {}
    imported = {plane_folder(t) for t in python_imports()["v6bench.lab.dataplanes.registry"]}
    assert folders <= imported

    class Loopback:
        name, summary, router_kinds, carries = "loopback", "a loopback", ("ns",), frozenset()
        keeps_state, guest_modules = False, ()

        def check_machine(self):
            pass

        def set_up(self, router):
            return {}

        def counts(self, router):
            return dict.fromkeys(COUNTS, 0)

        def record(self):
            return {"name": self.name}

    monkeypatch.setitem(registry.REGISTRY, "loopback", Loopback())
    ns = backends.REGISTRY["ns"]
    assert ns.dut_config({}, lab_spec({"data_plane": "loopback"})).acl == 0
    assert "loopback" in interface.data_planes()
    with pytest.raises(UsageError, match="a loopback cannot carry acl"):
        ns.dut_config({"acl": 1}, lab_spec({"data_plane": "loopback"}))


# R1 of topology a as the kernel gives it (ip -j route/addr): two connected routes a family, a static one beyond
# each tester, the router's own addresses.
ROUTES = [ovs_flows.Route("198.18.0.0/24", "r1-t1"), ovs_flows.Route("198.18.128.0/17", "r1-t1", "198.18.0.2"),
          ovs_flows.Route("2001:2:0:1::/64", "r1-t2"), ovs_flows.Route("2001:2:0:9000::/64", "r1-t2", "2001:2:0:1::2"),
          ovs_flows.Route("10.9.0.0/16", "mgmt")]
MACS = {"r1-t1": "02:00:00:00:00:01", "r1-t2": "02:00:00:00:00:02"}


def test_the_ovs_router_tables_route_by_longest_prefix_to_learned_neighbours():
    table = ovs_flows.table(ROUTES, ["198.18.0.1", "2001:2:0:1::1"], {"r1-t1": 1, "r1-t2": 2}, MACS)
    assert not any("10.9.0.0" in f for f in table)  # a route on a device that is not a port is left out
    assert ("table=0,priority=124,ip,nw_dst=198.18.0.0/24,actions=set_field:02:00:00:00:00:01->eth_src,dec_ttl,"
            "move:NXM_OF_IP_DST[]->NXM_NX_REG0[],load:1->NXM_NX_REG8[],resubmit(,1),resubmit(,2)") in table
    # A gateway's address as the next hop: 198.18.0.2 and 2001:2:0:1::2 as the registers take them.
    assert any("nw_dst=198.18.128.0/17" in f and "load:0xc6120002->NXM_NX_REG0[]" in f for f in table)
    assert any("ipv6_dst=2001:2:0:9000::/64" in f and "load:0x20010002000000010000000000000002->NXM_NX_XXREG1[]" in f
               and "priority=164" in f for f in table)
    assert "table=0,priority=900,ip,nw_dst=198.18.0.1,actions=drop" in table
    assert "table=0,priority=900,ipv6,ipv6_dst=2001:2:0:1::1,actions=drop" in table
    # The neighbours are learned into table 1 from ARP and ND, in registers the routes' next hops do not overlap.
    learns = [f for f in table if "learn(" in f]
    assert len(learns) == 3 and all("load:1->NXM_NX_REG9[0]" in f for f in learns)
    assert f"{ovs_flows.OUT_IPV4},actions=output:NXM_NX_REG8[]" in table


def test_with_the_kernel_datapath_the_kernel_gets_arp_nd_and_its_own_frames_through_internal_ports():
    table = ovs_flows.table(ROUTES, ["198.18.0.1", "2001:2:0:1::1"], {"r1-t1": 1, "r1-t2": 2}, MACS,
                            {"r1-t1": 101, "r1-t2": 102})
    assert "table=0,priority=1100,in_port=101,actions=output:1" in table  # the kernel's answers, ARP and ND
    learns = [f for f in table if "learn(" in f]
    assert len(learns) == 6 and all(f.endswith((",output:101", ",output:102")) for f in learns)
    assert "table=0,priority=900,in_port=2,ipv6,ipv6_dst=2001:2:0:1::1,actions=output:102" in table
    assert not any(f.endswith("actions=drop") and "priority=900" in f for f in table)
    # The routes are the userspace datapath's.
    assert [f for f in table if "priority=124" in f] == [f for f in ovs_flows.table(ROUTES, [], {"r1-t1": 1, "r1-t2": 2},
                                                                                      MACS) if "priority=124" in f]


def test_the_ovs_counts_are_read_from_its_flows_whatever_the_order_of_their_fields():
    dump = ("NXST_FLOW reply (xid=0x8):\n"
            " cookie=0x0, duration=5.3s, table=2, n_packets=2000, n_bytes=248000, idle_age=0, "
            "priority=10,ip,reg9=0x1/0x1 actions=output:NXM_NX_REG8[]\n"
            " cookie=0x0, duration=5.3s, table=2, n_packets=1999, n_bytes=247876, idle_age=0, "
            "priority=10,reg9=0x1/0x1,ipv6 actions=output:NXM_NX_REG8[]\n")
    assert n_packets(dump, ovs_flows.OUT_IPV4) == 2000 and n_packets(dump, ovs_flows.OUT_IPV6) == 1999


def test_the_kernel_beside_ovs_drops_what_is_not_for_the_router():
    text = ingress_ruleset({"r1-t1": ["198.18.0.1", "2001:2::1"], "r1-t2": ["198.19.0.1"]})
    assert text.startswith("table netdev v6b_ovs {")
    assert 'type filter hook ingress device "r1-t1" priority 0;' in text
    assert "ip daddr != { 198.18.0.1 } drop" in text
    assert "ip6 daddr != { 2001:2::1, fe80::/10, ff00::/8 } drop" in text
    assert "ip6 daddr != { fe80::/10, ff00::/8 } drop" in text  # r1-t2 without IPv6 (a link below 1280 B)
    assert text.count("chain in") == 2


def test_ovs_runs_on_namespace_routers_and_carries_no_table():
    ns = backends.REGISTRY["ns"]
    with pytest.raises(UsageError, match="cannot carry table"):
        ns.dut_config({"table": "10k"}, lab_spec({"data_plane": "ovs"}))
    with pytest.raises(UsageError, match="runs on ns routers, not vm"):
        backends.REGISTRY["vm"].dut_config({}, lab_spec({"router": "vm", "data_plane": "ovs"}))


def test_a_hard_reset_is_refused_where_it_would_rebuild_r1_without_its_data_plane():
    ns = backends.REGISTRY["ns"]
    ns.check_test(lab_spec({}), "reset", False, ("soft", "hard"))
    ns.check_test(lab_spec({"data_plane": "xdp"}), "reset", False, ("soft",))
    with pytest.raises(UsageError, match="hard reset rebuilds R1 without its ovs data plane") as e:
        ns.check_test(lab_spec({"data_plane": "ovs"}), "reset", False, ("hard",))
    assert e.value.field == ("kinds",)


def test_the_flowtable_counts_what_it_took_between_its_two_counters_and_the_kernel_the_rest():
    text = flowtable_plane.ruleset(("r1-t1", "r1-t2"))
    assert 'hook ingress priority 0; devices = { "r1-t1", "r1-t2" };' in text
    assert "meta l4proto { tcp, udp } flow add @fast" in text
    before = text.index("chain before")
    after = text.index("chain after")
    assert "priority -10;" in text[before:after] and "priority 10;" in text[after:]
    # nft list counters as nftables 1.0.6 prints them (abridged).
    listing = ("table netdev v6b_flowtable_count {\n\tcounter ipv4_before {\n\t\tpackets 5004 bytes 640512\n\t}\n"
               "\tcounter ipv6_before {\n\t\tpackets 5010 bytes 641280\n\t}\n"
               "\tcounter ipv4_after {\n\t\tpackets 6 bytes 768\n\t}\n\tcounter ipv6_after {\n\t\tpackets 12 bytes 1536\n\t}\n}\n")
    assert flowtable_plane.counter_values(listing) == {"ipv4_before": 5004, "ipv6_before": 5010, "ipv4_after": 6,
                                                        "ipv6_after": 12}

    class Guest:
        name, interfaces = "r1", ("r1-t1", "r1-t2")

        def command(self, argv):
            return listing if argv[0] == "nft" else SNMP

    v4, v6 = forwarded(SNMP)
    assert flowtable_plane.PLANE.counts(Guest(), {}) == {"forwarded_ipv4_frames": 4998 + v4,
                                                         "forwarded_ipv6_frames": 4998 + v6,
                                                         "slow_path_frames": v4 + v6}


def test_the_flowtable_runs_in_vm_routers_and_keeps_state_as_a_stateful_dut_does():
    vm = backends.REGISTRY["vm"]
    assert vm.dut_config({}, lab_spec({"router": "vm", "data_plane": "flowtable"})).acl == 0
    assert vm.dut_config({}, lab_spec({"router": "vm", "data_plane": "xdp"})).acl == 0
    with pytest.raises(UsageError, match="runs on vm routers, not ns"):
        backends.REGISTRY["ns"].dut_config({}, lab_spec({"data_plane": "flowtable"}))
    with pytest.raises(UsageError, match="cannot carry acl = 1"):
        vm.dut_config({"acl": 1}, lab_spec({"router": "vm", "data_plane": "flowtable"}))
    assert registry.keeps_state(DutConfig(), "flowtable") and not registry.keeps_state(DutConfig(), "xdp")
    assert registry.keeps_state(DutConfig(nat44=True), "kernel")
    assert interface.keeps_state(lab_spec({"router": "vm", "data_plane": "flowtable"}), DutConfig())


def test_a_router_kind_or_a_data_plane_needs_a_router_in_the_topology():
    with pytest.raises(UsageError, match="topology p2p has no router to forward with xdp") as e:
        lab_spec({"topology": "p2p", "data_plane": "xdp"})
    assert e.value.field == ("data_plane",)
    with pytest.raises(UsageError, match="topology p2p has no router to make a vm") as e:
        lab_spec({"topology": "p2p", "router": "vm"})
    assert e.value.field == ("router",)


def test_the_vm_image_holds_each_data_plane_s_modules_and_boots_without_them():
    from v6bench.lab.vm import vm_image
    assert set(vm_image.plane_modules()) == {"nf_flow_table_inet", "nft_flow_offload", "nft_objref", "openvswitch"}
    assert not set(vm_image.plane_modules()) & set(vm_image.MODULES)
