"""The emulated lab with VM routers (``[lab] router = "vm"``): every router
node of the topology is a VM (lab/vm/vm.py) booted from the image of
lab/vm/vm_image.py and configured by its startup script (lab/vm/vm_config.py).

Links: a tester–router link is a tap in the tester's namespace under the
tester's interface name (``t1-r1``) and a virtio NIC in the guest under the
router's (``r1-t1``); a router–router link is a pair of QEMU datagram
sockets in the run directory, guest to guest, with no host interface
between. Each VM runs on the router's CPU of the lab's CPU plan
(lab/model/cpus.py), the tester keeps its own.

With a forwarding table (``DutConfig.table``), each router on the path
boots with the table's route file as its second disk and memory for it
(:func:`memory_mb`), and the table is loaded in its guest
(lab/emulated/fib_load.py through :func:`table_shells`), again after a reset.
With NAT64 (``DutConfig.nat64``) R1 translates with Jool in its guest's
kernel (lab/vm/jool.py), its counters read with every trial.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import os
import subprocess
import time
from contextlib import ExitStack, contextmanager

from pyroute2 import IPRoute

from ...core.errors import LabError
from ..emulated import build, fib_load, plane_host
from ..machine import cost
from . import guest, router_host, vm, vm_config, vm_image
from ..model.cpus import CpuPlan
from . import jool
from ..dataplanes import registry as data_planes
from ..dataplanes.protocol import DataPlane
from ..model.dut import DutConfig
from ..machine.cpu_window import Sampler
from ..external.lab_file import SnmpSpec
from ..model.mtu import Mtus
from ..model.site import Site
from ..external.snmp_observe import SnmpDut, SnmpObserver, connect
from ..machine.lock import running
from ..emulated.state import LabState
from ..model.topology import ROUTER, TESTER, Node, Topology, parse_topology

#: NS-CACHE: nsCacheTimeout of IF-MIB's ifTable (NET-SNMP-AGENT-MIB), set to 0 after boot so the guest's
#: counters are read fresh, not from snmpd's 3-s cache.
#: What a VM router's forwarding work is read from (lab/machine/cost.py).
QEMU_BASIS = ("each VM's QEMU threads' run time on this machine over the traffic window "
              "(the guest's own accounting is not used)")
NS_CACHE_TIMEOUT_IFTABLE = "1.3.6.1.4.1.8072.1.5.3.1.2.1.3.6.1.2.1.2.2"
#: Where a VM router's guest reads the table's route file: its second virtio disk (lab/vm/vm.py).
TABLE_DISK = "/dev/vdb"
#: A guest's memory for each route of a table, bytes: the kernel's (about 200 B an IPv4 route and 300-400 B an
#: IPv6 route on 6.x: the internet table took 250 MiB of slab in the namespace lab) with room to spare.
ROUTE_MEMORY_BYTES = 512


def memory_mb(routes_file: Path | None) -> int:
    """A VM router's memory: the guest's own (:data:`vm.MEMORY_MB`) and,
    with a table, :data:`ROUTE_MEMORY_BYTES` a route plus the route file
    (the guest reads it through its page cache), in whole 64 MiB."""
    if routes_file is None:
        return vm.MEMORY_MB
    size = routes_file.stat().st_size
    with open(routes_file, "rb") as f:
        routes = sum(1 for line in f if line.strip())
    need = vm.MEMORY_MB + (routes * ROUTE_MEMORY_BYTES + size) / 2 ** 20
    return int(-(-need // 64) * 64)


def ports_of(site: Site, topo: Topology, router: str) -> list[vm.VmPort]:
    """The NICs of VM ``router``: one per link, in the node's interface order."""
    node = topo.node(router)
    index = [n.name for n in topo.routers].index(router) + 1
    out = []
    for k, i in enumerate(node.interfaces):
        peer = topo.node(i.peer_node)
        mac = vm.guest_mac(index, k)
        if peer.role == TESTER:
            out.append(vm.VmPort(i.peer_name, site.netns(peer.name), i.name, mac))
        else:
            run = site.lab_dir
            out.append(vm.VmPort(i.name, "", i.name, mac, dgram=(str(run / f"{router}-{i.name}.dgram"),
                                                                 str(run / f"{i.peer_node}-{i.peer_name}.dgram"))))
    return out


def start(site: Site, topo: Topology, link_speed_bps: float, mtu: Mtus, cpu_plan: CpuPlan, dut: DutConfig,
          sysctls: dict[str, Any]) -> tuple[dict[str, vm.Vm], dict[tuple[str, str], str]]:
    """Boots a VM for every router of ``topo`` (their namespaces exist);
    returns the VMs by node and the guest NICs' MACs by (node, interface).
    The testers' taps get their links' MTUs. With a table, the routers on
    the path get its route file as a disk (the table is loaded later,
    :func:`table_shells`)."""
    vm_image.load_manifest()
    site.lab_dir.mkdir(parents=True, exist_ok=True)
    on_path = {h.router for h in fib_load.hops(topo)}
    routes = fib_load.routes_file(site, dut.table, dut.table_seed) if dut.has_table else None
    vms: dict[str, vm.Vm] = {}
    macs: dict[tuple[str, str], str] = {}
    routers = [n.name for n in topo.routers]
    for r in routers:
        ports = ports_of(site, topo, r)
        script = vm_config.startup_script(topo, r, mtu, sysctls, dut, link_speed_bps)
        cpu = cpu_plan.router_cpu(routers.index(r)) if cpu_plan.arrangement == "split" else None
        disk = routes if r in on_path else None
        vms[r] = vm.start(r, site.netns(r), site.lab_dir, ports, cpu, script, table_disk=disk, memory_mb=memory_mb(disk))
        for p in ports:
            macs[(r, p.guest_ifname)] = p.mac
            if p.tap_netns:
                with IPRoute(netns=p.tap_netns) as ipr:
                    ipr.link("set", index=ipr.link_lookup(ifname=p.tap)[0], mtu=mtu.of(r, topo.node(r).interface(p.guest_ifname).peer_node))
        _management(site, vms[r])
    return vms, macs


class VmRouters:
    """How the emulated lab's routers are made when each is a VM
    (lab/emulated/build.Routers): the VMs booted in their nodes' namespaces, the
    testers' links configured, the table loaded in the guests."""

    router_kind = "vm"

    def holds_vm(self, node: Node) -> bool:
        return node.role == ROUTER

    def make(self, site: Site, topo: Topology, link_speed_bps: float, mtu: Mtus, cpu_plan: CpuPlan,
             dut: DutConfig, plane: DataPlane) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any] | None]:
        """The VMs, configured, their table loaded, then ``plane`` set up in each guest (its record in the
        router's node record, lab/emulated/plane_host.py; its work is the VM's, measured as QEMU's threads)."""
        vms, macs = start(site, topo, link_speed_bps, mtu, cpu_plan, dut, build.SYSCTLS[ROUTER])
        for node in topo.testers:
            macs.update(build.configure_node(site, node, mtu))
        nodes_json = describe(build.describe_nodes(site, topo, macs), vms)
        fib = (fib_load.load(site, topo, dut.table, dut.table_seed, dut.destinations, table_shells(vms))
               if dut.has_table else None)
        plane_host.set_up(plane, nodes_json, site.lab_dir, {}, router_host.host)  # the guest's CPUs are its own
        for node in topo.testers:
            build.wait_carrier(site, node)
        return nodes_json, [], fib


VM_ROUTERS = VmRouters()


def _management(site: Site, v: vm.Vm) -> None:
    """The host end of the management link, and the guest agent's interface
    cache turned off (the one write; v6bench only reads after it)."""
    ns = site.netns(v.node)
    with IPRoute(netns=ns) as ipr:
        idx = ipr.link_lookup(ifname="mgmt")[0]
        ipr.addr("replace", index=idx, address=vm.MGMT_HOST, prefixlen=vm.MGMT_PREFIX)
        ipr.link("set", index=idx, state="up")
    deadline = time.monotonic() + 10
    while True:
        r = subprocess.run(["ip", "netns", "exec", ns, "snmpset", "-v2c", "-c", vm.SNMP_WRITE_COMMUNITY, "-m", "",
                            "-t", "0.5", "-r", "0", vm.MGMT_GUEST, NS_CACHE_TIMEOUT_IFTABLE, "i", "0"],
                           capture_output=True, text=True)
        if r.returncode == 0:
            return
        if time.monotonic() > deadline:
            raise LabError(f"{v.node}: the guest's snmpd does not answer on {vm.MGMT_GUEST}: "
                           f"{r.stderr.strip() or r.stdout.strip()}")
        time.sleep(0.2)


def table_shells(vms: dict[str, vm.Vm]) -> dict[str, fib_load.Shell]:
    """Each VM router's :class:`~.fib_load.Shell`: commands in its guest, the route file on its second disk."""
    return {node: fib_load.Shell(v.guest.command, TABLE_DISK, guest.BINARIES["ip"]) for node, v in vms.items()}


def describe(nodes: list[dict[str, Any]], vms: dict[str, vm.Vm]) -> list[dict[str, Any]]:
    """The recorded node list with each VM router's ``vm`` record."""
    return [{**n, "vm": vms[n["name"]].to_json()} if n["name"] in vms else n for n in nodes]


def vm_of(node: dict[str, Any]) -> vm.Vm:
    return vm.Vm.from_json(node["vm"])


def guest_of(node: dict[str, Any]) -> guest.Guest:
    return vm_of(node).guest


def image_record() -> dict[str, Any]:
    m = vm_image.load_manifest()
    return {k: m.get(k) for k in ("kernel_release", "packages", "initrd_sha256", "vmlinuz_sha256", "kernel_entry",
                                   "kernel_sha256")}


def snmp_dut(node: dict[str, Any]) -> SnmpDut:
    """VM router ``node`` as its guest's agent is read: over the management
    link from the router's namespace, counters fresh (the agent's cache is
    off, lab/vm/vm_lab._management), CPU ticks from the agent's 5-s updates."""
    spec = SnmpSpec(host=vm.MGMT_GUEST, community=vm.SNMP_COMMUNITY, netns=node["netns"], cpu="ucd",
                    poll_interval_s=0.5, counter_refresh_s=0.3, timeout_s=1.0)
    return SnmpDut(node["name"], spec, tuple(i["name"] for i in node["interfaces"]))


class VmObserver:
    """:class:`~v6bench.lab.protocol.Observer` of the emulated lab with VM
    routers: each router's guest agent over SNMP (lab/external/snmp_observe.py), the
    results side by side in the emulated lab's shape (``routers`` in the
    topology's order, ``interfaces`` keyed ``NODE/IFNAME``)."""

    def __init__(self, lab: LabState) -> None:
        self.lab = lab
        self.observers = []
        self.vms = []
        for node in lab.nodes:
            if node["role"] == ROUTER:
                dut = snmp_dut(node)
                self.observers.append(SnmpObserver(dut, connect(dut)))
                self.vms.append(vm_of(node))

    def before(self) -> tuple[list[Any], dict[str, dict[str, Any] | None], dict[str, dict[str, int]]]:
        return [o.before() for o in self.observers], self._jool(), self._plane()

    def _plane(self) -> dict[str, dict[str, int]]:
        """The data plane's counts (lab/dataplanes/protocol.COUNTS) in each guest, by router."""
        return plane_host.counts(data_planes.find(self.lab.data_plane), self.lab.nodes, router_host.host)

    def _jool(self) -> dict[str, dict[str, Any] | None]:
        """Each Jool's counters (lab/vm/jool.py) by router; None where its instance is gone."""
        out: dict[str, dict[str, Any] | None] = {}
        for router, mode, _ in jool.translators(self.lab.dut_config.nat64, self.lab.dut_config.xlat):
            try:
                out[router] = jool.parse_stats(guest_of(self.lab.node(router)).command(jool.stats_command(mode)))
            except LabError:
                out[router] = None
        return out

    @contextmanager
    def during(self, limit_s: float, traffic_s: float | None = None) -> Iterator[tuple[list[Any], Sampler, list[int]]]:
        """Each guest's agent polled where the traffic is long enough for its
        CPU to be read (:meth:`SnmpObserver.during`), and on the host QEMU's threads
        and the VMs' CPUs sampled (lab/machine/cpu_window.py) on the tester's
        receive CPU."""
        tids = [t for v in self.vms for t in _threads(v.pid)]
        cpus = sorted({v.cpu for v in self.vms if v.cpu is not None})
        with ExitStack() as stack:
            polls = [stack.enter_context(o.during(limit_s, traffic_s)) for o in self.observers]
            host = stack.enter_context(Sampler(tids, cpus, self.lab.cpu_plan.tester_rx))
            yield polls, host, tids

    def after(self, before: tuple[list[Any], Any, dict[str, dict[str, int]]], during: tuple[list[Any], Sampler, list[int]],
              eng: dict[str, Any]) -> dict[str, Any]:
        """The guests' figures (``busy_ratio``: what each guest's kernel
        accounts, over its agent's window) and beside them each VM's cost to
        this machine over the traffic: ``host.qemu_busy_ratio`` (QEMU's
        threads' run time, share of one CPU) and ``host.cpu_busy_ratio``
        (its pinned CPU's busy time)."""
        polls, host, tids = during
        befores, jool_before, plane_before = before
        plane_after = self._plane()
        start_ns = eng["started_at_unix_ns"]
        window = host.window(start_ns, start_ns + round(eng["traffic_s"] * 1e9))
        routers: list[dict[str, Any]] = []
        interfaces: dict[str, Any] = {}
        agents: dict[str, Any] = {}
        out: dict[str, Any] = {"routers": routers, "tester_rx": {"busy_ns": None, "busy_ratio": None},
                               "interfaces": interfaces, "dut_cpus": {}, "snmp": agents}
        for o, b, d, v in zip(self.observers, befores, polls, self.vms):
            one = o.after(b, d, eng)
            router = one["routers"][0]
            if router.get("cpu_why"):
                router["cpu_why"] += " (host.qemu_busy_ratio is QEMU's share)"
            router["host"] = _host_cost(v, window, set(_threads(v.pid)) & set(tids))
            routers.append(router)
            interfaces.update(one["interfaces"])
            agents[o.dut.name] = one.get("snmp")
        if window:
            out["dut_cpus"] = {str(c): None if ns is None else round(ns / window["window_ns"], 4)
                               for c, ns in window["cpus"].items()}
        out["forwarding"] = cost.with_runs(cost.forwarding([_qemu_share(r["host"]) for r in routers], QEMU_BASIS),
                                           eng, host)
        now = self._jool()
        for router, mode, key in jool.translators(self.lab.dut_config.nat64, self.lab.dut_config.xlat):
            out[key] = jool.translated(mode, jool_before.get(router), now.get(router))
        if "clat" in out:
            out["clat"]["mode"] = "clat"
        out["data_plane"] = plane_host.over_trial(self.lab.data_plane, plane_before, plane_after, eng)
        return out

    def reasons(self, eng: dict[str, Any], observed: dict[str, Any], reset_router: str | None) -> list[str]:
        """None: a guest's discards are the VM router's own; frames the
        testers' taps drop are the engine's reasons (its ports' counters)."""
        return []


def reset(site: Site, lab: LabState, kind: str, router: str = "r1") -> tuple[LabState, dict[str, Any]]:
    """Resets VM router ``router`` (RFC 2544 §26.6): ``soft``, its guest's
    links down and up (routes restored, as on ``shutdown``/``no shutdown``);
    ``hard``, the guest reboots (QEMU resets the machine; the kernel boots,
    and the startup configuration on its disk configures it again). Returns
    the lab and the timing; a hard reset returns once the guest answers."""
    topo = parse_topology(lab.topology)
    node = lab.node(router)
    if node is None or node.get("role") != ROUTER:
        raise LabError(f"reset: topology {lab.topology} has no router {router}")
    v = vm_of(node)
    g = v.guest
    start_ns = time.time_ns()
    if kind == "soft":
        g.command(["sh", "-c", vm_config.links_down_script(topo, router)])
        down_ns = time.time_ns()
        g.command(["sh", "-c", vm_config.links_up_script(topo, router, lab.mtu, lab.dut_config)])
        back_s = None
    elif kind == "hard":
        try:
            g.script("reboot -f\n", timeout_s=0.5)
        except LabError:
            pass  # the guest reboots before it answers
        down_ns = time.time_ns()
        time.sleep(0.5)  # the old guest is gone before the new one is asked
        back_s = g.wait_ready(vm.BOOT_TIMEOUT_S[v.accel], alive=lambda: running(v.pid)) + 0.5
        _management(site, v)
    else:
        raise LabError(f"reset: {kind!r} is not soft or hard")
    if lab.fib is not None:  # the table went with its next hops' links (or the guest's memory): learned again
        d = lab.dut_config
        fib_load.load(site, topo, d.table, d.table_seed, d.destinations, table_shells({router: v}), only=router)
    end_ns = time.time_ns()
    return lab, {"reset_kind": kind, "router": router, "reset_started_unix_ns": start_ns,
                 "reset_down_s": (down_ns - start_ns) / 1e9, "reset_took_s": (end_ns - start_ns) / 1e9,
                 "guest_answered_after_s": back_s, "dut_napi_pinning": "not applicable (VM router)"}


def record(lab: LabState) -> dict[str, Any]:
    """What every result of a VM-router lab records beside the emulated
    lab's: each VM (accelerator, QEMU, CPU, boot time) and the guest image
    (kernel release, package versions, hashes)."""
    vms = {n["name"]: {k: n["vm"].get(k) for k in ("accel", "qemu_version", "cpu", "boot_s", "memory_mb")}
           for n in lab.nodes if n.get("vm")}
    return {"vms": vms, "vm_image": image_record()}


def _threads(pid: int) -> list[int]:
    try:
        return [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        return []


def _host_cost(v: vm.Vm, window: dict[str, Any] | None, tids: set[int]) -> dict[str, Any]:
    """VM ``v``'s cost to this machine over the traffic window."""
    if window is None:
        return {"qemu_busy_ratio": None, "qemu_busy_ns": None, "cpu_busy_ratio": None, "cpu": v.cpu, "accel": v.accel}
    ns = [window["threads"].get(t) for t in tids]
    qemu_ns = None if not ns or any(x is None for x in ns) else round(sum(ns))
    cpu_ns = window["cpus"].get(v.cpu) if v.cpu is not None else None
    return {"qemu_busy_ratio": None if qemu_ns is None else round(qemu_ns / window["window_ns"], 4),
            "qemu_busy_ns": qemu_ns,
            "cpu_busy_ratio": None if cpu_ns is None else round(cpu_ns / window["window_ns"], 4),
            "cpu": v.cpu, "accel": v.accel, "window_s": window["window_ns"] / 1e9}


def _qemu_share(host: dict[str, Any]) -> float | None:
    """A VM's forwarding work in CPUs (lab/machine/cost.py): its QEMU threads' run time over the window, unrounded."""
    return None if host.get("qemu_busy_ns") is None else host["qemu_busy_ns"] / (host["window_s"] * 1e9)
