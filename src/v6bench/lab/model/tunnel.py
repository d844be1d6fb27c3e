"""Tunnels between R1 and R2 on topology ``b`` (seed 003 Table 2): one IP
version carried inside the other across the R1–R2 link, both directions.

This kernel has no ``sit``, ``ip6tnl`` or ``gre`` (``env``), so the
datapaths are the kernel's own others:

``4in6`` (IPv4 in IPv6)
    Segment Routing encapsulation (RFC 8986): R1's route to t2's IPv4
    subnet encapsulates with H.Encaps.Red (``encap seg6 mode encap.red``)
    toward R2's SID ``2001:2:0:f4::2``; with one segment the reduced
    encapsulation adds no SRH, just an outer IPv6 header (Next Header 4):
    **40 bytes**. R2's SID decapsulates (End.DX4) and hands the IPv4 packet
    to t2. The reverse direction mirrors it (R1's SID ``2001:2:0:f4::1``).
``6in4`` (IPv6 in IPv4)
    VXLAN (RFC 7348) over the R1–R2 link's IPv4 addresses, VNI 46, UDP port
    4789: IPv6 is routed over the VXLAN devices (``2001:2:0:f6::/64``),
    which add an inner Ethernet header, VXLAN, UDP and IPv4: **50 bytes**.
    The kernel's IPv6-in-IPv4 device (``sit``, 20 bytes) would be used
    where it exists; here it does not.

Scoped to flow 2 (``[dut] scope = "flow2"``, lab/model/dut.py), the tunnel's
routes go to table :data:`SCOPED_TABLE` instead of replacing the native
ones, and a rule on each router (preference :data:`SCOPED_PREF`) looks
that table up for UDP from flow 2's source port: flow 2 of the carried
version crosses the tunnel, flow 1 beside it the bare link (the routers
carry both). Decapsulated frames find no route in that table and fall
through to the main one.

The overhead counts in the line-rate arithmetic (RFC 8219 App. A): on the
R1–R2 link a frame of the carried version takes ``overhead`` bytes more, so
the path's highest frame rate is the link speed over the mean frame (plus
20 bytes of preamble and gap, plus the overhead for the carried share)
(:meth:`v6bench.trial.path.LabPath.line_fps`); and a frame of the carried
version must fit the link's MTU with the overhead (:func:`check_frame`).
"""

from __future__ import annotations

from typing import Any

import ipaddress
from dataclasses import dataclass

from ...core.errors import UsageError
from ...core.frames import FLOW2_SRC_PORTS, port_match
from ...core.rates import ETHERNET_BYTES


@dataclass(frozen=True)
class Tunnel:
    name: str
    carried: int  # the IP version carried inside the other
    overhead_bytes: int
    mechanism: str


TUNNELS = {
    "4in6": Tunnel("4in6", 4, 40, "SRv6 H.Encaps.Red at the entry router, End.DX4 at the exit (RFC 8986), Linux seg6"),
    "6in4": Tunnel("6in4", 6, 50, "VXLAN over IPv4 (RFC 7348), Linux vxlan; sit is not in this kernel"),
}
#: The real tunnels of VM routers (Debian's kernel has the devices; lab/vm/vm_config.py sets them up).
VM_TUNNELS = {
    "4in6": Tunnel("4in6", 4, 40, "ip6tnl mode ipip6, encaplimit none (RFC 2473): IPv4 in IPv6, next header 4"),
    "6in4": Tunnel("6in4", 6, 20, "sit (RFC 4213): IPv6 in IPv4, IP protocol 41"),
    "gre6in4": Tunnel("gre6in4", 6, 24, "GRE over IPv4 (RFC 2784), Linux gre: IPv6 in GRE in IPv4"),
    "gre4in6": Tunnel("gre4in6", 4, 44, "GRE over IPv6 (RFC 7676), Linux ip6gre, encaplimit none: IPv4 in GRE in IPv6"),
}
NAMES = tuple(dict.fromkeys([*TUNNELS, *VM_TUNNELS]))
TUNNEL_DEV = "tun0"  # a VM router's tunnel device


def carried(name: str) -> int:
    """The IP version tunnel ``name`` carries, the same on every kind of router."""
    return {**TUNNELS, **VM_TUNNELS}[name].carried


def find(name: str, table: dict[str, Tunnel], where: str) -> Tunnel:
    """Tunnel ``name`` of ``table``, the tunnels a kind of router has
    (lab/backends.py: :data:`TUNNELS` on namespace routers, :data:`VM_TUNNELS`
    on VM routers); ``where`` names that kind in the error."""
    if name not in table:
        raise UsageError(f"{name!r} is not one of {', '.join(table)} {where}", "tunnel")
    return table[name]


SID = {"r1": "2001:2:0:f4::1", "r2": "2001:2:0:f4::2"}
#: The routers' IPv6 addresses inside an IPv6-over-IPv4 tunnel (``2001:2:0:f6::/64``), whatever carries it:
#: the VXLAN stand-in here, sit or GRE on VM routers (lab/vm/vm_config.py).
INNER_V6 = {"r1": "2001:2:0:f6::1", "r2": "2001:2:0:f6::2"}
VXLAN_DEV, VXLAN_VNI, VXLAN_PORT = "vx46", 46, 4789
#: Where a tunnel scoped to flow 2 keeps its routes, and the preference of the rule that selects them.
SCOPED_TABLE, SCOPED_PREF = "46", "1000"


def table(scoped: bool) -> list[str]:
    """``ip route`` arguments placing a tunnel's route (its scoped table, or the main one)."""
    return ["table", SCOPED_TABLE] if scoped else []


def scoped_rule(version: int) -> list[str]:
    """``ip`` arguments of the rule sending flow 2 of IP ``version`` to :data:`SCOPED_TABLE`."""
    # ipproto by number: a VM router's guest has no /etc/protocols to read "udp" from.
    return [f"-{version}", "rule", "add", "pref", SCOPED_PREF, "ipproto", "17", "sport", port_match(FLOW2_SRC_PORTS),
            "lookup", SCOPED_TABLE]


def check_frame(t: Tunnel | None, frame_size: int, versions: set[int], mtu: int) -> None:
    """Refuses frames of ``frame_size`` bytes when the IP ``versions`` sent
    include the carried one and it would not fit the R1–R2 link's MTU with
    the tunnel's overhead (the routers would fragment or drop it, which is
    another test)."""
    if t is None:
        return
    if t.carried in versions and frame_size - ETHERNET_BYTES + t.overhead_bytes > mtu:
        raise UsageError(f"{frame_size} bytes with the {t.name} tunnel's {t.overhead_bytes} bytes needs an MTU of "
                         f"{frame_size - ETHERNET_BYTES + t.overhead_bytes} on the R1–R2 link; the lab's is {mtu} (at most "
                         f"{mtu + ETHERNET_BYTES - t.overhead_bytes}-byte frames of IPv{t.carried})", "frame_size")


def check_topology(name: str, topology: str) -> None:
    """A tunnel runs between R1 and R2: it needs topology b."""
    if name and topology != "b":
        raise UsageError(f"{name} runs between R1 and R2: it needs topology b (t1 - r1 - r2 - t2), not {topology}", "tunnel")


def network(address_with_prefix: str) -> str:
    """The subnet of an address with its prefix length (``198.19.0.2/24`` → ``198.19.0.0/24``)."""
    return str(ipaddress.ip_interface(address_with_prefix).network)


def record(t: Tunnel | None, stand_in: bool) -> dict[str, Any] | None:
    """What the lab's ``--tunnel`` is (``lab status --json``, every result):
    its kind, the mechanism carrying it and its overhead; ``stand_in`` true
    on namespace routers, whose kernel (this machine's) has no ``sit``,
    ``ip6tnl`` or ``gre`` (module docstring)."""
    if t is None:
        return None
    return {"kind": t.name, "carried_ip_version": t.carried, "overhead_bytes": t.overhead_bytes,
            "mechanism": t.mechanism, "stand_in": stand_in}
