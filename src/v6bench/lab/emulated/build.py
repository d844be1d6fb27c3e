"""Builds a :class:`~v6bench.lab.model.topology.Topology` in network namespaces
with pyroute2, and removes it.

Per node one namespace (``Site.netns``). Testers: IPv6 disabled and no
addresses (the packet engine owns the tester addresses). Routers: IPv4 and
IPv6 forwarding, the topology's addresses (IPv6 without DAD) and static
routes. Every veth end: its link's MTU (:mod:`v6bench.lab.model.mtu`; a link
below 1280 bytes carries IPv4 only), up, and threaded NAPI pinned per the CPU
plan (:mod:`v6bench.lab.machine.napi`). Every created namespace is removed again if
the build fails or is interrupted.
"""

from __future__ import annotations

import os
import shutil
import time
from typing import Any, Iterable, Protocol

from pyroute2 import IPRoute
from pyroute2 import netns as pr_netns

from ... import engine
from ...core.errors import LabError
from . import ruleset as dut_rules
from ..dataplanes import registry as data_planes
from ..dataplanes.protocol import DataPlane
from . import configured, fib_load, plane_host, rps, shape, translator, tunnel_setup
from ..machine import napi, nsctl
from ..model import tunnel
from ..model.dut import DutConfig
from ..model.mtu import IPV6_MIN, Mtus
from ..model.mtu import routes as mtu_routes
from ..model.cpus import FIFO_PRIORITY, CpuPlan
from ..model.site import Site
from .state import LabState, forget, our_namespaces, save
from ..model.topology import ROUTER, TESTER, Node, Topology

#: Sysctls set in each namespace, by role (recorded with every result).
SYSCTLS = {
    TESTER: {
        "net.ipv6.conf.all.disable_ipv6": 1,
        "net.ipv6.conf.default.disable_ipv6": 1,
    },
    ROUTER: {
        "net.ipv4.ip_forward": 1,
        "net.ipv6.conf.all.forwarding": 1,
        "net.ipv6.conf.default.accept_dad": 0,
        "net.ipv6.conf.all.accept_dad": 0,
        # A router keeps its configured addresses across a link down/up, as
        # IPv4 does by default (a soft reset, lab/emulated/reset.py).
        "net.ipv6.conf.all.keep_addr_on_down": 1,
        # Segment Routing Headers addressed to the router are processed
        # (RFC 8754; --ext-headers srh); it needs both "all" and the
        # interface's own setting, which interfaces take from "default".
        "net.ipv6.conf.all.seg6_enabled": 1,
        "net.ipv6.conf.default.seg6_enabled": 1,
    },
}

CARRIER_TIMEOUT_S = 5.0


def _set_sysctls(ns: str, values: dict[str, Any]) -> None:
    def apply() -> None:
        for key, value in values.items():
            nsctl.sysctl(key, value)

    nsctl.run_in(ns, apply)


def _wait_carrier(ns: str, ifname: str) -> None:
    deadline = time.monotonic() + CARRIER_TIMEOUT_S
    with IPRoute(netns=ns) as ipr:
        while True:
            (link,) = ipr.get_links(ifname=ifname)
            if link.get("carrier") == 1 and link.get("operstate") in ("UP", "UNKNOWN"):
                return
            if time.monotonic() > deadline:
                raise LabError(f"{ns}/{ifname}: no carrier after {CARRIER_TIMEOUT_S:g} s")
            time.sleep(0.02)


class Routers(Protocol):
    """How a kind of emulated lab makes its routers (lab/backends.py gives
    each kind's): ``router_kind`` is recorded in the lab state (``LabState.router_kind``);
    ``holds_vm(node)``: the node's namespace only holds a VM (tester
    sysctls); ``make`` builds the routers and every link once the nodes'
    namespaces exist, with ``plane`` forwarding in them
    (lab/dataplanes/), and returns the recorded node list, the NAPI threads
    arranged and the table's record (or None)."""

    router_kind: str

    def holds_vm(self, node: Node) -> bool: ...

    def make(self, site: Site, topo: Topology, link_speed_bps: float, mtu: Mtus, cpu_plan: CpuPlan,
             dut: DutConfig, plane: DataPlane) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any] | None]: ...


class NamespaceRouters:
    """Each router a namespace of this machine's kernel, joined to its
    neighbours by veth pairs; its DUT configuration, table and tunnel set
    up in it, then its data plane; threaded NAPI arranged on the CPU plan's
    CPUs (after the data plane: veth keeps its NAPI threads when an XDP
    program is attached, but they are read once everything is in place)."""

    router_kind = "ns"

    def holds_vm(self, node: Node) -> bool:
        return False

    def make(self, site: Site, topo: Topology, link_speed_bps: float, mtu: Mtus, cpu_plan: CpuPlan,
             dut: DutConfig, plane: DataPlane) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any] | None]:
        for left, right in topo.links():
            with IPRoute(netns=site.netns(left.node)) as ipr:
                m = mtu.of(left.node, right.node)
                # A tester's link has a queue for each sender a port may have (lab/model/cpus.py), both ends alike.
                tester_link = TESTER in (topo.node(left.node).role, topo.node(right.node).role)
                q = cpu_plan.tester_link_queues if tester_link else 1
                ipr.link("add", ifname=left.name, kind="veth", mtu=m, num_tx_queues=q, num_rx_queues=q,
                         peer={"ifname": right.name, "net_ns_fd": site.netns(right.node), "mtu": m,
                               "num_tx_queues": q, "num_rx_queues": q})
        macs = {}
        for node in topo.nodes:
            macs.update(configure_node(site, node, mtu))
        nodes_json = describe_nodes(site, topo, macs)
        configure_dut(site, topo, dut, link_speed_bps, mtu)
        fib = (fib_load.load(site, topo, dut.table, dut.table_seed, dut.destinations,
                             fib_load.namespace_shells(site, topo, dut.table, dut.table_seed))
               if dut.has_table else None)
        if dut.tunnel:
            tunnel_setup.configure(site, topo, dut.tunnel, mtu.of("r1", "r2"), scoped=dut.scope == "flow2")
        helpers = translator.start_all(site, topo, dut, cpu_plan)
        split = cpu_plan.arrangement == "split"
        routers = [n.name for n in topo.routers]
        helpers += plane_host.set_up(plane, nodes_json, site.lab_dir,
                                     {r: cpu_plan.router_cpu(i) if split else None for i, r in enumerate(routers)})
        for node in topo.nodes:
            wait_carrier(site, node)
        threads = arrange_cpus(site, topo, cpu_plan) if split else []
        rps.apply(site, topo, dut, cpu_plan)
        if split:  # a translator's or a data plane's work is its router's: sampled with the router's NAPI threads
            threads += helpers
        return nodes_json, threads, fib


#: The routers of a lab built without saying how.
NAMESPACE_ROUTERS = NamespaceRouters()


def build(site: Site, topo: Topology, link_speed_bps: float, mtu: Mtus, cpu_plan: CpuPlan, temporary: bool,
          dut: DutConfig = DutConfig(), routers: Routers = NAMESPACE_ROUTERS,
          data_plane: str = data_planes.DEFAULT) -> LabState:
    """Builds the lab; the caller holds the lock and has cleared stale labs.
    ``routers``: how its routers are made (:class:`Routers`; each a
    namespace by default); ``data_plane``: what forwards in them
    (lab/dataplanes/registry.py, checked against the routers and ``dut``).

    On any failure, or Ctrl-C, whatever was created is removed and the
    error is raised again.
    """
    mtu.check([(a.node, b.node) for a, b in topo.links()])
    tunnel.check_topology(dut.tunnel, topo.name)
    plane = data_planes.check(data_plane, routers.router_kind, dut)
    plane.check_machine()
    existing = our_namespaces(site)
    if existing:
        raise LabError(f"namespaces {', '.join(existing)} exist already")
    started = time.time()
    kernel = os.uname().release
    sysctls = {n.name: SYSCTLS[n.role] for n in topo.nodes}
    owner = os.getpid()

    def state(status: str, nodes: Iterable[dict[str, Any]] = (), threads: Iterable[dict[str, Any]] = (),
              fib: dict[str, Any] | None = None) -> LabState:
        return LabState(topo.name, link_speed_bps, mtu, status, temporary, owner, started, cpu_plan,
                        tuple(nodes), tuple(threads), sysctls, kernel, dut, routers.router_kind, fib, data_plane)

    save(site, state("building"))
    try:
        for node in topo.nodes:
            create_node_namespace(site, node, vm_holder=routers.holds_vm(node))
        done = state("up", *routers.make(site, topo, link_speed_bps, mtu, cpu_plan, dut, plane))
        save(site, done)
        return done
    except BaseException as e:
        if os.getpid() != owner:  # a forked helper unwinding: not ours to clean
            raise
        destroy(site)
        if isinstance(e, Exception) and not isinstance(e, LabError):
            raise LabError(f"cannot build the lab: {type(e).__name__}: {e}") from e
        raise


def create_node_namespace(site: Site, node: Node, vm_holder: bool = False) -> None:
    """The node's namespace with loopback up and its role's sysctls; a VM
    router's namespace (``vm_holder``: it holds QEMU and the management
    link) forwards nothing and has a tester's sysctls."""
    ns = site.netns(node.name)
    pr_netns.create(ns)
    with IPRoute(netns=ns) as ipr:
        ipr.link("set", index=ipr.link_lookup(ifname="lo")[0], state="up")
    _set_sysctls(ns, SYSCTLS[TESTER if vm_holder else node.role])


def bring_up(site: Site, node: Node) -> dict[tuple[str, str], str]:
    """Sets the node's interfaces up; returns their MACs."""
    macs = {}
    with IPRoute(netns=site.netns(node.name)) as ipr:
        for i in node.interfaces:
            idx = ipr.link_lookup(ifname=i.name)[0]
            ipr.link("set", index=idx, state="up")
            macs[(node.name, i.name)] = ipr.get_links(idx)[0].get("address")
    return macs


def address(site: Site, node: Node, mtu: Mtus) -> None:
    """Gives a router's interfaces their addresses (testers' addresses
    belong to the engine) and adds the node's static routes; idempotent.
    A router forwards from here on. On an interface whose link's MTU is
    below 1280 bytes there is no IPv6 (RFC 8200 §5): no IPv6 address, and
    no IPv6 route via a neighbour on it."""
    with IPRoute(netns=site.netns(node.name)) as ipr:
        if node.role == ROUTER:
            for i in node.interfaces:
                idx = ipr.link_lookup(ifname=i.name)[0]
                v4, p4 = i.ipv4.split("/")
                v6, p6 = i.ipv6.split("/")
                ipr.addr("replace", index=idx, address=v4, prefixlen=int(p4))
                if mtu.of(i.node, i.peer_node) >= IPV6_MIN:
                    ipr.addr("replace", index=idx, address=v6, prefixlen=int(p6), flags=0x02)  # IFA_F_NODAD
        for r in mtu_routes(node, mtu):
            ipr.route("replace", dst=r.dst, gateway=r.gateway)


def configure_node(site: Site, node: Node, mtu: Mtus) -> dict[tuple[str, str], str]:
    """:func:`bring_up` then :func:`address` (building a lab, when no
    traffic flows yet); returns the interfaces' MACs."""
    macs = bring_up(site, node)
    address(site, node, mtu)
    return macs


def wait_carrier(site: Site, node: Node) -> None:
    for i in node.interfaces:
        _wait_carrier(site.netns(node.name), i.name)


def configure_dut(site: Site, topo: Topology, dut: DutConfig, link_speed_bps: float, mtu: Mtus,
                  only: str | None = None) -> None:
    """Loads each router's nftables rule set (:mod:`v6bench.lab.model.dut`) and,
    with ``dut.shape``, shapes its interfaces (:mod:`v6bench.lab.emulated.shape`);
    ``only``: that router alone."""
    for node in topo.nodes:
        if node.role == ROUTER and only in (None, node.name):
            text = dut_rules.ruleset(dut, topo, node.name)
            if text:
                configured.apply(site.netns(node.name), text)
            if dut.shape:
                for i in node.interfaces:
                    shape.apply(site.netns(node.name), i.name, link_speed_bps, mtu.of(i.node, i.peer_node))


def describe_nodes(site: Site, topo: Topology, macs: dict[tuple[str, str], str]) -> list[dict[str, Any]]:
    """The recorded node list (``lab status --json``) of ``topo`` built at
    ``site``; ``macs`` maps (node, interface) to the interface's MAC. Tester
    interfaces also carry their next hop (``gateway_ipv4``/``gateway_ipv6``)
    and ``addresses_owner: engine``."""
    nodes = []
    for node in topo.nodes:
        ifaces = []
        for i in node.interfaces:
            entry = {"name": i.name, "mac": macs[(node.name, i.name)], "ipv4": i.ipv4, "ipv6": i.ipv6,
                     "peer": f"{i.peer_node}/{i.peer_name}"}
            if node.role == TESTER:
                gw4, gw6 = topo.gateway(node.name)
                entry.update(gateway_ipv4=gw4, gateway_ipv6=gw6, addresses_owner="engine")
            ifaces.append(entry)
        nodes.append({"name": node.name, "role": node.role, "netns": site.netns(node.name), "interfaces": ifaces})
    return nodes


def arrange_cpus(site: Site, topo: Topology, cpu_plan: CpuPlan, only: str | None = None,
                 known: dict[int, str] | None = None) -> list[dict[str, Any]]:
    """The ``split`` arrangement (:mod:`v6bench.lab.model.cpus`): threaded NAPI on
    every veth end, router threads on DUT CPUs, tester threads on the
    tester's receive CPU, all at SCHED_FIFO priority
    :data:`~v6bench.lab.model.cpus.FIFO_PRIORITY`: test frames are not left waiting behind the
    spinning sender, and a router forwards before any ordinary task on its
    CPU, as its softirq would (at normal priority other tasks on the DUT
    CPU made it lose frames far below its capacity, docs/architecture.md).
    ``only``: that node alone; ``known``: as for :func:`napi.enable_threaded`."""
    threads = []
    routers = [n.name for n in topo.routers]
    for node in topo.nodes:
        if only not in (None, node.name):
            continue
        tester = node.role == TESTER
        cpu = cpu_plan.tester_rx if tester else cpu_plan.router_cpu(routers.index(node.name))
        for i in node.interfaces:
            for t in napi.enable_threaded(site.netns(node.name), i.name, cpu, known):
                os.sched_setscheduler(t.pid, os.SCHED_FIFO, os.sched_param(FIFO_PRIORITY))
                threads.append(napi.thread_record(node.name, t.netns, t.ifname, t.pid, t.cpu, "fifo", FIFO_PRIORITY))
    return threads


def destroy(site: Site) -> list[str]:
    """Removes every namespace of this site (killing what still runs in
    them: their veths and nftables go with them) and the state file.
    and every file the lab made (:attr:`Site.lab_dir`: a VM router's
    sockets, disks, console). Returns the namespaces removed. Safe to call
    when nothing exists."""
    # The engine holds sockets in the namespaces but runs in none of them.
    engine.stop_recorded(site.engine_pid_file)
    removed = []
    for ns in our_namespaces(site):
        try:
            nsctl.remove(ns)
        except OSError as e:
            raise LabError(f"cannot remove namespace {ns}: {e}") from e
        removed.append(ns)
    shutil.rmtree(site.lab_dir, ignore_errors=True)
    forget(site)
    return removed
