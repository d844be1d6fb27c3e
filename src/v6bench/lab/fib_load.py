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
table; after it the routes are counted back from the kernel
(``/proc/net/fib_triestat``, ``/proc/net/rt6_stats``) and a count short
of the table is an error.

The FIB learning time (RFC 3222 §3.3) is measured from the start of the
load until a sample of destinations (:data:`SAMPLE`, a family) is
forwarded by every router toward t2, checked by the kernel's own route
lookup (``ip route get``), which is the lookup a frame takes; no test
frame is sent during the load. The kernel's slab memory before and after
the load is recorded (whole machine: namespaces share the kernel).

The generated table is kept as a prefix list in the run directory
(``tables/``), so building a lab again with the same table does not
generate it again. The destinations the trials walk
(:func:`destinations`) are one address inside each of ``destinations``
prefixes a family, where that prefix is the longest match.
"""

from __future__ import annotations

import ipaddress
import json
import time
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import LabError
from ..fib import destinations as fib_destinations
from ..fib import generate, prefix_list, shapes
from ..fib.generate import Table
from . import nsctl
from .site import Site
from .topology import Topology

#: The nexthop object of each family in every router (ids the lab uses for nothing else).
NEXTHOP_ID = {4: 4_000_000, 6: 6_000_000}
#: Destinations a family whose route lookup is checked for the learning time.
SAMPLE = 64
#: Longest a load may take, s (1.23 M routes take about 20 s on this machine).
LOAD_TIMEOUT_S = 600
#: net.ipv6.route.max_size while a table is loaded (the kernel's default is 4096 on 6.x in a namespace).
IPV6_ROUTE_MAX_SIZE = 2 ** 31 - 1


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
        if node.role != "dut":
            continue
        (i,) = [i for i in node.interfaces if i.peer_node == there]
        peer = topo.node(there).interface(i.peer_name)
        out.append(Hop(here, i.name, peer.ipv4.split("/")[0], peer.ipv6.split("/")[0]))
    return out


def table_file(site: Site, name: str, seed: int) -> Path:
    """The table as a prefix list, generated once per run directory."""
    path = site.run_dir / "tables" / f"{name}-seed{seed}.txt"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        prefix_list.write(generate.table(shapes.table_kind(name), seed), tmp)
        tmp.replace(path)
    return path


def destinations_file(site: Site, name: str, seed: int, n: int) -> Path:
    return site.run_dir / "tables" / f"{name}-seed{seed}-dest{n}.json"


def destinations(site: Site, name: str, seed: int, n: int, table: Table | None = None) -> dict[int, tuple[str, ...]]:
    """``n`` destinations a family of table ``name`` (seed ``seed``), as
    text, kept beside the table (:func:`destinations_file`: the same every
    time); ``table``: the table already read, so it is not read again."""
    path = destinations_file(site, name, seed, n)
    if path.exists():
        return {int(k): tuple(v) for k, v in json.loads(path.read_text()).items()}
    table = table or prefix_list.read(table_file(site, name, seed))
    out = {}
    for version, routes in ((4, table.ipv4), (6, table.ipv6)):
        out[version] = tuple(str(ipaddress.ip_address(a)) for a in fib_destinations.destinations(routes, n, seed))
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(out))
    tmp.replace(path)  # whole or not at all: a cut-short write is never read back
    return out


def batch(table: Table, hop: Hop) -> str:
    """``ip -batch`` input: the nexthop objects, then a route a prefix."""
    lines = [f"nexthop replace id {NEXTHOP_ID[4]} via {hop.ipv4} dev {hop.dev}",
             f"nexthop replace id {NEXTHOP_ID[6]} via {hop.ipv6} dev {hop.dev}"]
    for version, routes in ((4, table.ipv4), (6, table.ipv6)):
        nh = NEXTHOP_ID[version]  # a batch line takes no -4/-6: the prefix gives the family
        lines += [f"route replace {ipaddress.ip_address(network)}/{length} nhid {nh}" for network, length in routes.routes]
    return "\n".join(lines) + "\n"


def route_counts(netns: str) -> dict[int, int]:
    """Routes in the main tables: IPv4 prefixes (fib_triestat, Main) and IPv6 route entries (rt6_stats)."""
    trie = nsctl.run_in(netns, lambda: nsctl.read_file("/proc/net/fib_triestat"))
    rt6 = nsctl.run_in(netns, lambda: nsctl.read_file("/proc/net/rt6_stats"))
    main = trie.split("Main:", 1)[1] if "Main:" in trie else ""
    ipv4 = next((int(line.split()[1]) for line in main.splitlines() if line.strip().startswith("Prefixes:")), 0)
    return {4: ipv4, 6: int(rt6.split()[3], 16)}


def slab_kib() -> int:
    """The kernel's slab memory, KiB (/proc/meminfo)."""
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("Slab:"):
            return int(line.split()[1])
    return 0


def forwards(netns: str, hop: Hop, addresses: dict[int, tuple[str, ...]]) -> bool:
    """Whether the router's route lookup sends every address to its next hop."""
    for version, addrs in addresses.items():
        want = hop.ipv4 if version == 4 else hop.ipv6
        lines = "\n".join(f"route get {a}" for a in addrs) + "\n"
        out = nsctl.command(netns, ["ip", "-batch", "-"], input_text=lines, timeout_s=60)
        if out.count(f"via {want} ") < len(addrs):
            return False
    return True


def load(site: Site, topo: Topology, name: str, seed: int, n_destinations: int, only: str | None = None) -> dict:
    """Loads table ``name`` into every router on the path (``only``: that
    router alone, after a reset); returns the record: per router the routes
    counted back, the load and learning times [s], and the slab memory it
    took [KiB]."""
    path = table_file(site, name, seed)
    table = prefix_list.read(path)
    sample = {v: a[:SAMPLE] for v, a in destinations(site, name, seed, n_destinations, table).items()}
    routers = {}
    for hop in hops(topo):
        if only not in (None, hop.router):
            continue
        ns = site.netns(hop.router)
        nsctl.run_in(ns, lambda: nsctl.sysctl("net.ipv6.route.max_size", IPV6_ROUTE_MAX_SIZE))
        nsctl.command(ns, ["ip", "nexthop", "flush"])  # a table loaded before (a reset's reload) goes with its next hops
        before, slab0 = route_counts(ns), slab_kib()
        t0 = time.monotonic()
        r = nsctl.command(ns, ["ip", "-batch", "-"], input_text=batch(table, hop), timeout_s=LOAD_TIMEOUT_S)
        load_s = time.monotonic() - t0
        while not forwards(ns, hop, sample):
            if time.monotonic() - t0 > LOAD_TIMEOUT_S:
                raise LabError(f"{hop.router}: the table's sampled destinations are not forwarded "
                               f"{LOAD_TIMEOUT_S} s after the load began")
            time.sleep(0.05)
        learning_s = time.monotonic() - t0
        after = route_counts(ns)
        added = {v: after[v] - before[v] for v in (4, 6)}
        want = {4: len(table.ipv4), 6: len(table.ipv6)}
        if added != want:
            raise LabError(f"{hop.router}: the kernel holds {added[4]:,} IPv4 and {added[6]:,} IPv6 routes more "
                           f"after the load, the table has {want[4]:,} and {want[6]:,}{': ' + r.strip() if r.strip() else ''}")
        routers[hop.router] = {"ipv4_routes": added[4], "ipv6_routes": added[6], "load_s": round(load_s, 3),
                               "fib_learning_s": round(learning_s, 3), "slab_kib": slab_kib() - slab0,
                               "next_hop": {"dev": hop.dev, "ipv4": hop.ipv4, "ipv6": hop.ipv6}}
    return {"table": name, "seed": seed, "source": table.source, "destinations": n_destinations,
            "destinations_file": str(destinations_file(site, name, seed, n_destinations)),
            "learning_checked_by": f"route lookups of {SAMPLE} destinations a family (ip route get)",
            "routers": routers}
