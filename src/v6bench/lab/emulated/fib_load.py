"""A forwarding table like the Internet's in the emulated lab's routers
(RFC 3222; issue-free summary in docs/methods.md, "Forwarding tables like
the Internet's").

With ``DutConfig.table`` other than ``none``, every router on the path
from t1 to t2 holds the table (:mod:`v6bench.fib`, from its name and
seed), every prefix routed toward t2: through a nexthop object per family
(``ip nexthop``, one a family, so a million routes share one next hop as
a BGP table's do), loaded with ``ip -batch`` (a netlink message per route
from one process: 1 M routes in about 20 s here, where a Python netlink
loop takes minutes; the one bulk use of ``ip`` in the lab). Before the
load ``net.ipv6.route.max_size`` is raised so that IPv6 takes a full
table; after it the routes through the table's next hops are counted
back from the kernel (:func:`route_counts`) and a count that is not the
table's is an error.

A router is reached through its :class:`Shell`: a command runner and the
place it reads the table's route file (:func:`routes_file`, the same for
every router: the routes name only the nexthop objects). A namespace
router (:func:`namespace_shell`) runs commands with ``ip netns exec`` and
reads the file where it is; a VM router (lab/vm/vm_lab.py) runs them in its
guest and reads the file as its second disk, attached when it booted, so
that 50 MB of routes do not cross the guest's serial control port.

The FIB learning time (RFC 3222 §3.3) is measured from the start of the
load until a sample of destinations (:data:`SAMPLE`, a family) is
forwarded by every router toward t2, checked by the kernel's own route
lookup (``ip route get``), which is the lookup a frame takes; no test
frame is sent during the load. The kernel's slab memory before and after
the load is recorded (whole machine: namespaces share the kernel).

The table's prefix list and the destinations the trials walk are files
of the run directory (lab/machine/table_files.py), kept so that building
a lab again with the same table does not generate it again.
"""

from __future__ import annotations

import ipaddress
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from ...core.errors import LabError
from ...fib import prefix_list
from ...fib.generate import Table
from ..machine import nsctl
from ..machine.table_files import SAMPLE, destinations, destinations_file, table_file
from ..model.site import Site
from ..model.topology import ROUTER, Topology

#: The nexthop object of each family in every router (ids the lab uses for nothing else).
NEXTHOP_ID = {4: 4_000_000, 6: 6_000_000}
#: Longest a load may take, s (1.23 M routes take about 20 s on this machine).
LOAD_TIMEOUT_S = 600
#: net.ipv6.route.max_size while a table is loaded (the kernel's default is 4096 on 6.x in a namespace).
IPV6_ROUTE_MAX_SIZE = 2 ** 31 - 1
#: The route file is padded with empty lines (which ``ip -batch`` skips) to a whole number of these,
#: so that a VM reads all of it as a disk.
SECTOR_BYTES = 512


@dataclass(frozen=True)
class Shell:
    """How the loader reaches one router: ``command(argv, input_text, timeout_s)``
    runs ``argv`` there and returns its output (a failure raises
    :class:`LabError`); ``routes`` is the path under which that router
    reads the table's route file (:func:`routes_file`); ``ip``: iproute2's
    ``ip`` in a shell script there (a VM guest's busybox shell runs its own
    ``ip`` applet before PATH is searched, lab/vm/guest.py)."""

    command: Callable[[list[str], str | None, float], str]
    routes: str
    ip: str = "ip"


def namespace_shell(netns: str, routes: Path) -> Shell:
    """A namespace router's shell: commands in ``netns``, the route file where it is."""
    def command(argv: list[str], input_text: str | None = None, timeout_s: float = 30) -> str:
        return nsctl.command(netns, argv, input_text, timeout_s)

    return Shell(command, str(routes))


@dataclass(frozen=True)
class Hop:
    """Where a router sends the table's prefixes: out of ``dev`` to t2's side."""

    router: str
    dev: str
    ipv4: str
    ipv6: str


def hops(topo: Topology) -> list[Hop]:
    """Each router on the path from t1 to t2 and its next hop toward t2."""
    path = topo.path("t1", "t2")
    out = []
    for here, there in zip(path, path[1:]):
        node = topo.node(here)
        if node.role != ROUTER:
            continue
        (i,) = [i for i in node.interfaces if i.peer_node == there]
        peer = topo.node(there).interface(i.peer_name)
        out.append(Hop(here, i.name, peer.ipv4.split("/")[0], peer.ipv6.split("/")[0]))
    return out


def route_lines(table: Table) -> list[str]:
    """``ip -batch`` lines: a route a prefix, through its family's nexthop object."""
    lines = []
    for version, routes in ((4, table.ipv4), (6, table.ipv6)):
        nh = NEXTHOP_ID[version]  # a batch line takes no -4/-6: the prefix gives the family
        lines += [f"route replace {ipaddress.ip_address(network)}/{length} nhid {nh}" for network, length in routes.routes]
    return lines


def routes_path(site: Site, name: str, seed: int) -> Path:
    return site.run_dir / "tables" / f"{name}-seed{seed}.routes"


def routes_file(site: Site, name: str, seed: int, table: Table | None = None) -> Path:
    """The table's routes as an ``ip -batch`` file (:func:`route_lines`),
    written once per run directory beside the table, padded with empty
    lines to whole :data:`SECTOR_BYTES`; ``table``: the table already read."""
    path = routes_path(site, name, seed)
    if not path.exists():
        table = table or prefix_list.read(table_file(site, name, seed))
        text = ("\n".join(route_lines(table)) + "\n").encode()
        text += b"\n" * (-len(text) % SECTOR_BYTES)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")  # not the table's own .tmp
        tmp.write_bytes(text)
        tmp.replace(path)
    return path


def nexthop_lines(hop: Hop) -> str:
    """``ip -batch`` input: the nexthop objects the routes go through."""
    return (f"nexthop replace id {NEXTHOP_ID[4]} via {hop.ipv4} dev {hop.dev}\n"
            f"nexthop replace id {NEXTHOP_ID[6]} via {hop.ipv6} dev {hop.dev}\n")


def route_counts(shell: Shell) -> dict[int, int]:
    """The routes the router's kernel holds through each family's nexthop
    object (the lines of ``ip route show`` naming it, counted in the
    router: a VM's million lines never cross its control port; iproute2
    6.1 has no ``show nhid`` filter). The kernel's own totals
    (``/proc/net/fib_triestat``, ``rt6_stats``) would count other routes
    too: a guest still settling its addresses adds its own IPv6 routes
    while the table loads."""
    script = "; ".join(f"{shell.ip} -{v} route show | grep -c ' nhid {NEXTHOP_ID[v]} ' || true" for v in (4, 6))
    counts = shell.command(["sh", "-c", script], None, LOAD_TIMEOUT_S).split()
    return {4: int(counts[0]), 6: int(counts[1])}


def slab_kib(shell: Shell) -> int:
    """The router's kernel's slab memory, KiB (/proc/meminfo: the machine's for
    a namespace router, which shares the kernel; the guest's for a VM)."""
    for line in shell.command(["cat", "/proc/meminfo"], None, 30).splitlines():
        if line.startswith("Slab:"):
            return int(line.split()[1])
    return 0


def forwards(shell: Shell, hop: Hop, addresses: dict[int, tuple[str, ...]]) -> bool:
    """Whether the router's route lookup sends every address to its next hop."""
    for version, addrs in addresses.items():
        want = hop.ipv4 if version == 4 else hop.ipv6
        lines = "\n".join(f"route get {a}" for a in addrs) + "\n"
        out = shell.command(["ip", "-batch", "-"], lines, 60)
        if out.count(f"via {want} ") < len(addrs):
            return False
    return True


def namespace_shells(site: Site, topo: Topology, name: str, seed: int) -> dict[str, Shell]:
    """The namespace routers' shells (:func:`namespace_shell`) for table ``name``."""
    routes = routes_path(site, name, seed)  # written by load()
    return {hop.router: namespace_shell(site.netns(hop.router), routes) for hop in hops(topo)}


def load(site: Site, topo: Topology, name: str, seed: int, n_destinations: int, shells: Mapping[str, Shell],
         only: str | None = None) -> dict[str, Any]:
    """Loads table ``name`` into every router on the path (``only``: that
    router alone, after a reset), each through its shell in ``shells``
    (by router);
    returns the record: per router the routes counted back, the load and
    learning times [s], and the slab memory it took [KiB]."""
    path = table_file(site, name, seed)
    table = prefix_list.read(path)
    sample = {v: a[:SAMPLE] for v, a in destinations(site, name, seed, n_destinations, table).items()}
    routes_file(site, name, seed, table)
    routers = {}
    for hop in hops(topo):
        if only not in (None, hop.router):
            continue
        sh = shells[hop.router]
        sh.command(["sh", "-c", f"echo {IPV6_ROUTE_MAX_SIZE} > /proc/sys/net/ipv6/route/max_size"], None, 30)
        sh.command(["ip", "nexthop", "flush"], None, 30)  # a table loaded before (a reset's reload) goes with its next hops
        slab0 = slab_kib(sh)
        t0 = time.monotonic()
        sh.command(["ip", "-batch", "-"], nexthop_lines(hop), 30)
        r = sh.command(["ip", "-batch", sh.routes], None, LOAD_TIMEOUT_S)
        load_s = time.monotonic() - t0
        while not forwards(sh, hop, sample):
            if time.monotonic() - t0 > LOAD_TIMEOUT_S:
                raise LabError(f"{hop.router}: the table's sampled destinations are not forwarded "
                               f"{LOAD_TIMEOUT_S} s after the load began")
            time.sleep(0.05)
        learning_s = time.monotonic() - t0
        held = route_counts(sh)
        want = {4: len(table.ipv4), 6: len(table.ipv6)}
        if held != want:
            raise LabError(f"{hop.router}: the kernel holds {held[4]:,} IPv4 and {held[6]:,} IPv6 routes through the "
                           f"table's next hops after the load, the table has {want[4]:,} and {want[6]:,}{': ' + r.strip() if r.strip() else ''}")
        routers[hop.router] = {"ipv4_routes": held[4], "ipv6_routes": held[6], "load_s": round(load_s, 3),
                               "fib_learning_s": round(learning_s, 3), "slab_kib": slab_kib(sh) - slab0,
                               "next_hop": {"dev": hop.dev, "ipv4": hop.ipv4, "ipv6": hop.ipv6}}
    return {"table": name, "seed": seed, "source": table.source, "destinations": n_destinations,
            "destinations_file": str(destinations_file(site, name, seed, n_destinations)),
            "learning_checked_by": f"route lookups of {SAMPLE} destinations a family (ip route get)",
            "routers": routers}
