"""The tester hosts' own IP stacks, for the host-stack tests (seed 001,
seed 004 §2.1–2.2): kernel addresses on the tester ports while a test
runs, and a direct baseline link between t1 and t2.

Normally a tester port has no kernel address and IPv6 is off in its
namespace: the engine owns the port's addresses (``lab/build.py``). A
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

from ..lab import nsctl
from ..lab.site import Site
from ..lab.state import LabState

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


def _ip(ns: str, *argv: str) -> None:
    nsctl.command(ns, ["ip", *argv])


def _enable_ipv6(ns: str, ifname: str, on: bool) -> None:
    nsctl.command(ns, ["sysctl", "-qw", f"net.ipv6.conf.{ifname}.disable_ipv6={0 if on else 1}"])


def _lab_hosts(lab: LabState) -> dict[str, tuple[Host, int, int, str, str]]:
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
def kernel_stacks(site: Site, lab: LabState, baseline: bool = False) -> Iterator[dict[str, Pair]]:
    """Sets up the kernel ends (module docstring); yields ``{"routed": Pair}``
    and, with ``baseline``, ``"baseline"`` too. Removes them on exit."""
    hosts = _lab_hosts(lab)
    undo: list = []
    try:
        for name, (h, p4, p6, gw4, gw6) in hosts.items():
            _enable_ipv6(h.netns, h.ifname, True)
            undo.append(lambda h=h: _enable_ipv6(h.netns, h.ifname, False))  # drops its IPv6 addresses and routes
            _ip(h.netns, "addr", "replace", f"{h.ipv4}/{p4}", "dev", h.ifname)
            undo.append(lambda h=h, p4=p4: _ip(h.netns, "addr", "del", f"{h.ipv4}/{p4}", "dev", h.ifname))
            _ip(h.netns, "-6", "addr", "replace", f"{h.ipv6}/{p6}", "dev", h.ifname, "nodad")
            if lab.topology != "p2p":
                other = hosts["t2" if name == "t1" else "t1"][0]
                _ip(h.netns, "route", "replace", f"{other.ipv4}/32", "via", gw4, "dev", h.ifname)
                undo.append(lambda h=h, o=other: _ip(h.netns, "route", "del", f"{o.ipv4}/32", "dev", h.ifname))
                _ip(h.netns, "-6", "route", "replace", f"{other.ipv6}/128", "via", gw6, "dev", h.ifname)
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


def _baseline(lab: LabState, undo: list) -> Pair:
    t1, t2 = lab.node("t1"), lab.node("t2")
    (i1,) = t1["interfaces"]
    mtu = lab.mtu.of("t1", i1["peer"].split("/")[0])
    _ip(t1["netns"], "link", "add", BASELINE_IF["t1"], "mtu", str(mtu), "type", "veth",
        "peer", "name", BASELINE_IF["t2"], "netns", t2["netns"], "mtu", str(mtu))
    undo.append(lambda: _ip(t1["netns"], "link", "del", BASELINE_IF["t1"]))  # removes the peer too
    ends = []
    for k, node in enumerate((t1, t2), start=1):
        ns, ifname = node["netns"], BASELINE_IF[node["name"]]
        v4, v6 = str(BASELINE_V4.network_address + k), str(BASELINE_V6.network_address + k)
        _enable_ipv6(ns, ifname, True)
        _ip(ns, "addr", "add", f"{v4}/{BASELINE_V4.prefixlen}", "dev", ifname)
        _ip(ns, "-6", "addr", "add", f"{v6}/{BASELINE_V6.prefixlen}", "dev", ifname, "nodad")
        _ip(ns, "link", "set", ifname, "up")
        ends.append(Host(node["name"], ns, ifname, v4, v6))
    return Pair(ends[0], ends[1], "baseline")
