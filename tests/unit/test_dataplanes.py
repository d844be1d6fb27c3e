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
from v6bench.lab.dataplanes.kernel.plane import forwarded
from v6bench.lab.dataplanes.protocol import COUNTS, DataPlane
from v6bench.lab.dataplanes.xdp.plane import map_counts
from v6bench.lab.emulated.observe import beside_engine
from v6bench.lab.emulated.state import LabState
from v6bench.lab.model.cpus import plan
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
    with pytest.raises(UsageError, match="'ovs' is not one of kernel, xdp") as e:
        ns.dut_config({}, lab_spec({"data_plane": "ovs"}))
    assert e.value.field == ("data_plane",)
    with pytest.raises(UsageError, match=r"cannot carry acl = 1: .*data_plane = \"kernel\" can") as e:
        ns.dut_config({"acl": 1}, lab_spec({"data_plane": "xdp"}))
    assert e.value.field == ("acl",) and "\n" not in e.value.message
    for key, value in (("nat44", True), ("shape", True), ("limit_fps", 1000), ("rps", "all")):
        with pytest.raises(UsageError, match=f"cannot carry {key}"):
            registry.check("xdp", "ns", ns.dut_config({key: value}, lab_spec({})))
    with pytest.raises(UsageError, match="runs on ns routers, not vm"):
        backends.REGISTRY["vm"].dut_config({}, lab_spec({"router": "vm", "data_plane": "xdp"}))
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
    out = beside_engine({"name": "xdp", "routers": {"r1": counts}}, eng)
    assert out["engine_rx_ipv4_frames"] == 50000 and out["engine_rx_ipv6_frames"] == 49995
    assert out["routers"]["r1"]["beyond_engine_ipv4_frames"] == 0
    assert out["routers"]["r1"]["beyond_engine_ipv6_frames"] == 3
    assert set(COUNTS) <= set(out["routers"]["r1"])


def test_a_new_data_plane_is_its_folder_and_one_registry_line(monkeypatch):
    # Outside lab/dataplanes/, nothing imports a data plane's folder: the registry is where a new one is named.
    folders = {"kernel", "xdp"}

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
