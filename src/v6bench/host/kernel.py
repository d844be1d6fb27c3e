"""The tester hosts' own IP stacks, for the host-stack tests (seed 001,
seed 004 §2.1–2.2): kernel addresses on the tester ports while a test
runs, and a direct baseline link between t1 and t2.

Normally a tester port has no kernel address and IPv6 is off in its
namespace: the engine owns the port's addresses (``lab/emulated/build.py``). A
host-stack test needs the kernel's sockets instead, so for its duration
:func:`kernel_stacks` gives t1 and t2:

- IPv6 on their lab interface (``disable_ipv6`` 0 there only);
- one kernel address per family beside the engine's: the engine's host
  number + 100 (t1 on topology a: 198.18.0.102/24 and 2001:2::66/64;
  ``KERNEL_HOST_OFFSET``), so the engine's own addresses stay unused;
- a host route to the other tester's kernel address via the port's
  gateway (none on ``p2p``, where they share a link).

With ``baseline``, also a veth between t1 and t2 themselves
(``t1-base`` / ``t2-base``, 198.18.250.0/24 and 2001:2:0:250::/64): the
back-to-back link that seed 004 §2.1 measured by replacing the router
with a crossover cable. It is not threaded NAPI: its frames are handled
on the sending CPU, as by two hosts that share no router.

Everything is removed on exit, also on an error or Ctrl-C; a crash leaves
it inside the lab's namespaces, which ``lab down`` removes whole.
"""

from __future__ import annotations

import ipaddress
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

from pyroute2 import IPRoute

from ..lab.machine import nsctl
from ..lab.model.site import Site
from ..lab.protocol import Lab

KERNEL_HOST_OFFSET = 100
BASELINE_V4 = ipaddress.ip_network("198.18.250.0/24")
BASELINE_V6 = ipaddress.ip_network("2001:2:0:250::/64")
BASELINE_IF = {"t1": "t1-base", "t2": "t2-base"}


@dataclass(frozen=True)
class Host:
    """One tester host's kernel end: namespace, interface and addresses
    (no prefix length)."""

    node: str
    netns: str
    ifname: str
    ipv4: str
    ipv6: str

    def address(self, version: int) -> str:
        return self.ipv4 if version == 4 else self.ipv6


@dataclass(frozen=True)
class Pair:
    """The client (t1) and server (t2) ends of one path."""

    client: Host
    server: Host
    path: str  # "routed" (through the lab) or "baseline" (the direct link)


def _plus(address_with_prefix: str, n: int) -> tuple[str, int]:
    iface = ipaddress.ip_interface(address_with_prefix)
    return str(iface.ip + n), iface.network.prefixlen


IFA_F_NODAD = 0x02  # an IPv6 address used at once, without duplicate address detection


def _address(ns: str, ifname: str, op: str, address: str, prefixlen: int) -> None:
    """Adds (``replace``, ``add``) or removes (``del``) an address of either family, IPv6 without DAD."""
    with IPRoute(netns=ns) as ipr:
        flags = {"flags": IFA_F_NODAD} if ":" in address and op != "del" else {}
        ipr.addr(op, index=ipr.link_lookup(ifname=ifname)[0], address=address, prefixlen=prefixlen, **flags)


def _host_route(ns: str, ifname: str, op: str, host: str, gateway: str | None = None) -> None:
    """Sets (``replace``) or removes (``del``) the route to one host address via ``gateway``."""
    prefix = 128 if ":" in host else 32
    with IPRoute(netns=ns) as ipr:
        gw = {"gateway": gateway} if gateway else {}
        ipr.route(op, dst=f"{host}/{prefix}", oif=ipr.link_lookup(ifname=ifname)[0], **gw)


def _enable_ipv6(ns: str, ifname: str, on: bool) -> None:
    nsctl.run_in(ns, lambda: nsctl.sysctl(f"net.ipv6.conf.{ifname}.disable_ipv6", 0 if on else 1))


def _lab_hosts(lab: Lab) -> dict[str, tuple[Host, int, int, str, str]]:
    """Per tester: its kernel end, prefix lengths and gateways."""
    out = {}
    for name in ("t1", "t2"):
        node = lab.node(name)
        (i,) = node["interfaces"]
        v4, p4 = _plus(i["ipv4"], KERNEL_HOST_OFFSET)
        v6, p6 = _plus(i["ipv6"], KERNEL_HOST_OFFSET)
        out[name] = (Host(name, node["netns"], i["name"], v4, v6), p4, p6, i["gateway_ipv4"], i["gateway_ipv6"])
    return out


@contextmanager
def kernel_stacks(site: Site, lab: Lab, baseline: bool = False) -> Iterator[dict[str, Pair]]:
    """Sets up the kernel ends (module docstring); yields ``{"routed": Pair}``
    and, with ``baseline``, ``"baseline"`` too. Removes them on exit."""
    hosts = _lab_hosts(lab)
    undo: list = []
    try:
        for name, (h, p4, p6, gw4, gw6) in hosts.items():
            _enable_ipv6(h.netns, h.ifname, True)
            undo.append(lambda h=h: _enable_ipv6(h.netns, h.ifname, False))  # drops its IPv6 addresses and routes
            _address(h.netns, h.ifname, "replace", h.ipv4, p4)
            undo.append(lambda h=h, p4=p4: _address(h.netns, h.ifname, "del", h.ipv4, p4))
            _address(h.netns, h.ifname, "replace", h.ipv6, p6)
            if lab.topology != "p2p":
                other = hosts["t2" if name == "t1" else "t1"][0]
                _host_route(h.netns, h.ifname, "replace", other.ipv4, gw4)
                undo.append(lambda h=h, o=other: _host_route(h.netns, h.ifname, "del", o.ipv4))
                _host_route(h.netns, h.ifname, "replace", other.ipv6, gw6)
        pairs = {"routed": Pair(hosts["t1"][0], hosts["t2"][0], "routed" if lab.topology != "p2p" else "baseline")}
        if baseline:
            pairs["baseline"] = _baseline(lab, undo)
        yield pairs
    finally:
        errors = []
        for step in reversed(undo):
            try:
                step()
            except Exception as e:  # keep undoing; report the first
                errors.append(e)
        if errors:
            raise errors[0]


def _baseline(lab: Lab, undo: list) -> Pair:
    t1, t2 = lab.node("t1"), lab.node("t2")
    (i1,) = t1["interfaces"]
    mtu = lab.mtu.of("t1", i1["peer"].split("/")[0])
    with IPRoute(netns=t1["netns"]) as ipr:
        ipr.link("add", ifname=BASELINE_IF["t1"], kind="veth", mtu=mtu,
                 peer={"ifname": BASELINE_IF["t2"], "net_ns_fd": t2["netns"], "mtu": mtu})
    undo.append(lambda: _remove_link(t1["netns"], BASELINE_IF["t1"]))  # removes the peer too
    ends = []
    for k, node in enumerate((t1, t2), start=1):
        ns, ifname = node["netns"], BASELINE_IF[node["name"]]
        v4, v6 = str(BASELINE_V4.network_address + k), str(BASELINE_V6.network_address + k)
        _enable_ipv6(ns, ifname, True)
        _address(ns, ifname, "add", v4, BASELINE_V4.prefixlen)
        _address(ns, ifname, "add", v6, BASELINE_V6.prefixlen)
        with IPRoute(netns=ns) as ipr:
            ipr.link("set", index=ipr.link_lookup(ifname=ifname)[0], state="up")
        ends.append(Host(node["name"], ns, ifname, v4, v6))
    return Pair(ends[0], ends[1], "baseline")


def _remove_link(ns: str, ifname: str) -> None:
    with IPRoute(netns=ns) as ipr:
        ipr.link("del", index=ipr.link_lookup(ifname=ifname)[0])
