"""Lab topologies as pure graphs: nodes, links, addresses and routes.

Nothing here touches the system; :mod:`v6bench.lab.emulated.build` turns a
:class:`Topology` into namespaces. Topologies (seed 000 Topology A and B,
seed 004 Figure 1 and its back-to-back baseline):

=========  =====================================================
``p2p``    t1 ── t2              (tester ports back to back)
``a``      t1 ── r1 ── t2        (one router, seed 000 Topology A)
``b``      t1 ── r1 ── r2 ── t2  (two routers, seed 000 Topology B)
``chain:N``  t1 ── r1 ── … ── rN ── t2, 1 ≤ N ≤ 5 (seed 004 Fig. 1 for N=1)
``mesh:N``   N tester ports t1 … tN on one router r1, 4 ≤ N ≤ 8
             (seed 004 Fig. 4; RFC 2889 §5.1 mesh traffic); t1 ── r1 ── t2
             is topology ``a``, so two-port tests run on it unchanged
=========  =====================================================

Interface names are ``<node>-<peer>`` (``t1-r1`` in t1, ``r1-t1`` in r1),
each inside its node's namespace.

Addressing (RFC 2544 App. C, RFC 5180 §5.2; /24 and /64 subnets):

- the link at t1's side: 198.18.0.0/24 and 2001:2::/64;
- the link at t2's side: 198.19.0.0/24 and 2001:2:0:1::/64;
- the link from router rJ to rJ+1: 198.18.(10+J).0/24 and 2001:2:0:(10+J hex)::/64,
  e.g. r1–r2 is 198.18.11.0/24 and 2001:2:0:11::/64;
- a router's address on a tester link is .1 / ::1 and the tester's .2 / ::2;
  on a router–router link the lower router is .1 / ::1, the higher .2 / ::2;
- ``p2p``: one link 198.18.0.0/24, 2001:2::/64, t1 at .2 / ::2 and t2 at .3 / ::3;
- ``mesh:N``: tester tK (K ≥ 3) on 198.18.(30+K).0/24 and 2001:2:0:(30+K)::/64
  (t3: 198.18.33.0/24, 2001:2:0:33::/64), router .1, tester .2;
- many addresses (:data:`SOURCES`, :data:`DESTINATIONS`): 198.18.128.0/17 and
  2001:2:0:8000::/64 routed toward t1, 198.19.128.0/17 and 2001:2:0:9000::/64
  toward t2, by every router.

Tester addresses belong to the packet engine, never to the tester's kernel.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from ...core.errors import UsageError

MAX_CHAIN = 5
MESH_PORTS = (4, 8)


@dataclass(frozen=True)
class Subnet:
    """One link's dual-stack subnet."""

    ipv4: ipaddress.IPv4Network
    ipv6: ipaddress.IPv6Network

    def host(self, n: int) -> tuple[str, str]:
        """Host ``n``'s addresses with prefix length: (``198.18.0.n/24``, ``2001:2::n/64``)."""
        v4 = f"{self.ipv4.network_address + n}/{self.ipv4.prefixlen}"
        v6 = f"{self.ipv6.network_address + n}/{self.ipv6.prefixlen}"
        return v4, v6


#: The subnet at t1's side, at t2's side, and of the link rJ–rJ+1.
LEFT = Subnet(ipaddress.IPv4Network("198.18.0.0/24"), ipaddress.IPv6Network("2001:2::/64"))
RIGHT = Subnet(ipaddress.IPv4Network("198.19.0.0/24"), ipaddress.IPv6Network("2001:2:0:1::/64"))
#: The ranges t1's frames come from and go to with many addresses (core/frames.Traffic.addresses): every router
#: routes SOURCES toward t1 and DESTINATIONS toward t2, each via the next hop on the way (a tester's own address
#: at the ends), so that a tester port answers for a whole range as a router behind it would.
SOURCES = Subnet(ipaddress.IPv4Network("198.18.128.0/17"), ipaddress.IPv6Network("2001:2:0:8000::/64"))
DESTINATIONS = Subnet(ipaddress.IPv4Network("198.19.128.0/17"), ipaddress.IPv6Network("2001:2:0:9000::/64"))


def mesh_tester(k: int) -> Subnet:
    """The subnet of mesh tester ``tK``, K ≥ 3 (t1 and t2 keep LEFT and RIGHT)."""
    return Subnet(ipaddress.IPv4Network(f"198.18.{30 + k}.0/24"), ipaddress.IPv6Network(f"2001:2:0:{30 + k}::/64"))


def inter_router(j: int) -> Subnet:
    return Subnet(
        ipaddress.IPv4Network(f"198.18.{10 + j}.0/24"),
        ipaddress.IPv6Network(f"2001:2:0:{10 + j}::/64"),
    )


@dataclass(frozen=True)
class Interface:
    """One end of a link. ``ipv4``/``ipv6`` carry the prefix length."""

    name: str
    node: str
    peer_node: str
    peer_name: str
    ipv4: str
    ipv6: str


@dataclass(frozen=True)
class Route:
    """A static route on a router: ``dst`` via ``gateway`` (both families)."""

    dst: str
    gateway: str


#: A node's role. A router's role is stored as "dut" (lab.json, ``lab status --json`` and every
#: result's node list, docs/results-format.md); in code it is :data:`ROUTER`, so that "dut" names the
#: DUT configuration alone.
TESTER, ROUTER = "tester", "dut"


@dataclass(frozen=True)
class Node:
    """A tester or a router (``role`` :data:`TESTER` or :data:`ROUTER`)."""

    name: str
    role: str
    interfaces: tuple[Interface, ...]
    routes: tuple[Route, ...] = ()

    def interface(self, name: str) -> Interface:
        for i in self.interfaces:
            if i.name == name:
                return i
        raise KeyError(name)


@dataclass(frozen=True)
class Topology:
    """A lab graph: nodes in order t1, r1 … rN, t2 and their links."""

    name: str
    nodes: tuple[Node, ...]

    def node(self, name: str) -> Node:
        for n in self.nodes:
            if n.name == name:
                return n
        raise KeyError(name)

    @property
    def routers(self) -> tuple[Node, ...]:
        return tuple(n for n in self.nodes if n.role == ROUTER)

    @property
    def testers(self) -> tuple[Node, ...]:
        return tuple(n for n in self.nodes if n.role == TESTER)

    def links(self) -> list[tuple[Interface, Interface]]:
        """Each link once, as (end in the earlier node, end in the later node)."""
        order = {n.name: k for k, n in enumerate(self.nodes)}
        out = []
        for n in self.nodes:
            for i in n.interfaces:
                if order[i.peer_node] > order[n.name]:
                    out.append((i, self.node(i.peer_node).interface(i.peer_name)))
        return out

    def path(self, src: str = "t1", dst: str = "t2") -> list[str]:
        """The nodes a frame from tester ``src`` to tester ``dst`` crosses,
        both included (every topology here is a tree)."""
        def walk(node: str, came: str | None) -> list[str] | None:
            if node == dst:
                return [node]
            for i in self.node(node).interfaces:
                if i.peer_node != came and (self.node(i.peer_node).role == ROUTER or i.peer_node == dst):
                    rest = walk(i.peer_node, node)
                    if rest:
                        return [node, *rest]
            return None

        found = walk(src, None)
        if found is None:
            raise KeyError(f"no path {src} -> {dst}")
        return found

    def gateway(self, tester: str) -> tuple[str, str]:
        """The next hop (IPv4, IPv6, no prefix length) of a tester port: its
        router, or on ``p2p`` the other tester itself."""
        (i,) = self.node(tester).interfaces
        peer = self.node(i.peer_node).interface(i.peer_name)
        return peer.ipv4.split("/")[0], peer.ipv6.split("/")[0]


def _chain(name: str, routers: int) -> Topology:
    """t1 – r1 – … – rN – t2 (N = ``routers``; 0 gives p2p)."""
    names = ["t1"] + [f"r{k}" for k in range(1, routers + 1)] + ["t2"]
    # Subnets and host numbers per link k (between names[k] and names[k+1]).
    links = []
    for k in range(len(names) - 1):
        left, right = names[k], names[k + 1]
        if routers == 0:
            links.append((LEFT, 2, 3))
        elif k == 0:
            links.append((LEFT, 2, 1))
        elif k == len(names) - 2:
            links.append((RIGHT, 1, 2))
        else:
            links.append((inter_router(k), 1, 2))
    ifaces: dict[str, list[Interface]] = {n: [] for n in names}
    for k, (subnet, host_left, host_right) in enumerate(links):
        left, right = names[k], names[k + 1]
        v4l, v6l = subnet.host(host_left)
        v4r, v6r = subnet.host(host_right)
        ifaces[left].append(Interface(f"{left}-{right}", left, right, f"{right}-{left}", v4l, v6l))
        ifaces[right].append(Interface(f"{right}-{left}", right, left, f"{left}-{right}", v4r, v6r))
    subnets = [s for s, _, _ in links]
    nodes = []
    for idx, n in enumerate(names):
        role = TESTER if n.startswith("t") else ROUTER
        routes: list[Route] = []
        if role == ROUTER:
            # Subnets to the left (links 0..idx-2) go via the left neighbour,
            # subnets to the right (links idx+1..) via the right neighbour.
            left_if = ifaces[names[idx - 1]][-1]  # the left neighbour's right-hand end
            right_if = ifaces[names[idx + 1]][0]  # the right neighbour's left-hand end
            for s in [*subnets[: idx - 1], SOURCES]:
                routes += [Route(str(s.ipv4), left_if.ipv4.split("/")[0]), Route(str(s.ipv6), left_if.ipv6.split("/")[0])]
            for s in [*subnets[idx + 1 :], DESTINATIONS]:
                routes += [Route(str(s.ipv4), right_if.ipv4.split("/")[0]), Route(str(s.ipv6), right_if.ipv6.split("/")[0])]
        nodes.append(Node(n, role, tuple(ifaces[n]), tuple(routes)))
    return Topology(name, tuple(nodes))


def _mesh(ports: int) -> Topology:
    """Topology ``a`` plus testers t3 … tN, each on its own link to r1."""
    a = _chain(f"mesh:{ports}", 1)
    t1, r1, t2 = a.nodes
    extra, r1_ifaces = [], list(r1.interfaces)
    for k in range(3, ports + 1):
        v4t, v6t = mesh_tester(k).host(2)
        v4r, v6r = mesh_tester(k).host(1)
        name = f"t{k}"
        extra.append(Node(name, "tester", (Interface(f"{name}-r1", name, "r1", f"r1-{name}", v4t, v6t),)))
        r1_ifaces.append(Interface(f"r1-{name}", "r1", name, f"{name}-r1", v4r, v6r))
    return Topology(a.name, (t1, Node("r1", ROUTER, tuple(r1_ifaces), r1.routes), t2, *extra))


def parse_topology(text: str) -> Topology:
    """``p2p``, ``a``, ``b``, ``chain:N`` (1 ≤ N ≤ 5) or ``mesh:N``
    (4 ≤ N ≤ 8) → the graph."""
    key = text.strip().lower()
    if key == "p2p":
        return _chain("p2p", 0)
    if key == "a":
        return _chain("a", 1)
    if key == "b":
        return _chain("b", 2)
    if key.startswith("chain:"):
        n_text = key.split(":", 1)[1]
        if not n_text.isdigit() or not 1 <= int(n_text) <= MAX_CHAIN:
            raise UsageError(f"{text!r}: chain:N needs 1 ≤ N ≤ {MAX_CHAIN}", "topology")
        return _chain(f"chain:{int(n_text)}", int(n_text))
    if key.startswith("mesh:"):
        n_text = key.split(":", 1)[1]
        low, high = MESH_PORTS
        if not n_text.isdigit() or not low <= int(n_text) <= high:
            raise UsageError(f"{text!r}: mesh:N needs {low} ≤ N ≤ {high} tester ports", "topology")
        return _mesh(int(n_text))
    raise UsageError(f"unknown topology {text!r}; use p2p, a, b, chain:N (1 ≤ N ≤ {MAX_CHAIN}) "
                     f"or mesh:N ({MESH_PORTS[0]} ≤ N ≤ {MESH_PORTS[1]})", "topology")
