"""Double translation, 464XLAT (RFC 6877; RFC 8219 §4's second class), on
topology b: a CLAT on R1, the customer's edge, translates t1's IPv4
statelessly into IPv6 (RFC 7915), the link from R1 to R2 carries it as
IPv6, and a PLAT on R2, the provider's router, translates it back
statefully (RFC 6146) toward t2's IPv4. What the routers are, as
addresses, TAYGA configurations and routes (no commands run here;
:mod:`v6bench.lab.emulated.translator` starts them).

- **CLAT** (R1, TAYGA): t1's IPv4 address is mapped one to one to
  :func:`clat_address`, its RFC 6052 embedding in :data:`CLAT_PREFIX`
  (RFC 6877 §6.3: a CLAT's own /64 or /96 for the one host behind it);
  an IPv4 destination becomes ``translation.PREFIX::<IPv4>``, the PLAT's
  NAT64 prefix. R1 routes t2's IPv4 network into the CLAT, and R2 holds
  t1's unreachable, so no IPv4 test frame crosses between them as IPv4:
  t2 reaches t1 only by answering t1's connections through both.
- **PLAT** (R2): the stateful NAT64 of the namespace routers
  (:mod:`.translation`, ``stateful``: TAYGA's dynamic pool, then source
  NAT to R2's address toward t2).

The frames arrive at t2 as IPv4 of the size t1 sent (20 bytes longer on
the link from R1 to R2, counted in the path's line rate).
"""

from __future__ import annotations

import ipaddress
from dataclasses import replace

from . import translation
from .topology import Topology
from .translation import Tayga
from .tunnel import Tunnel

MODES = ("464",)
#: The CLAT's prefix (RFC 6052 §2.2, /96) in 2001:2::/48: t1's IPv4 address is embedded in it.
CLAT_PREFIX = ipaddress.IPv6Network("2001:2:0:4646::/96")
#: The CLAT's own IPv4 and IPv6 addresses (the source of its ICMP errors), beside the PLAT's in 198.18.64.0/22.
CLAT_V4 = ipaddress.ip_address("198.18.64.9")
CLAT_V6 = ipaddress.ip_address("2001:2:0:4647::1")
#: The CLAT's tun device in R1.
CLAT_DEV = "clat"
#: The link from R1 to R2 as the path's line rate and MTU checks see it (trial/path.py): IPv4 carried
#: 20 bytes longer (a 40-byte IPv6 header for a 20-byte IPv4 one), as a tunnel's overhead is.
LINK = Tunnel("464XLAT", 4, translation.HEADER_GROWTH_BYTES,
              "IPv4 translated to IPv6 by the CLAT and back by the PLAT (RFC 6877)")


def clat_address(t1_ipv4: str) -> ipaddress.IPv6Address:
    """The IPv6 address t1's IPv4 address becomes at the CLAT."""
    return translation.embed(CLAT_PREFIX, t1_ipv4.split("/")[0])


def _peer(topo: Topology, router: str, other: str, version: int) -> str:
    """``other``'s address on its link with ``router``."""
    (iface,) = [i for i in topo.node(other).interfaces if i.peer_node == router]
    return (iface.ipv4 if version == 4 else iface.ipv6).split("/")[0]


def taygas(nat64: str, xlat: str, topo: Topology) -> tuple[Tayga, ...]:
    """The TAYGAs of a DUT with ``[dut] nat64`` and ``xlat`` on ``topo``:
    R1's NAT64, or 464XLAT's CLAT on R1 and PLAT on R2, or none."""
    if nat64:
        (t1,) = topo.node("t1").interfaces
        return (translation.nat64(nat64, t1.ipv6.split("/")[0]),)
    return _xlat(topo) if xlat else ()


def routes(topo: Topology) -> dict[str, tuple[tuple[str, ...], ...]]:
    """The ``ip`` arguments of the routes past the translators, by router:
    R1 sends the NAT64 prefix to R2, R2 the CLAT's prefix to R1 and holds
    t1's IPv4 network unreachable (whatever translates, TAYGA or Jool)."""
    (t1,) = topo.node("t1").interfaces
    return {"r1": (("-6", "route", "replace", str(translation.PREFIX), "via", _peer(topo, "r1", "r2", 6)),),
            "r2": (("-6", "route", "replace", str(CLAT_PREFIX), "via", _peer(topo, "r2", "r1", 6)),
                   ("-4", "route", "replace", "unreachable", str(ipaddress.ip_interface(t1.ipv4).network)))}


def _xlat(topo: Topology) -> tuple[Tayga, Tayga]:
    """The CLAT on R1 and the PLAT on R2 of topology b ``topo`` (TAYGA)."""
    (t1,) = topo.node("t1").interfaces
    (t2,) = topo.node("t2").interfaces
    t1_v4 = t1.ipv4.split("/")[0]
    past = routes(topo)
    clat = Tayga("r1", CLAT_DEV,
                 (f"tun-device {CLAT_DEV}", f"ipv4-addr {CLAT_V4}", f"ipv6-addr {CLAT_V6}",
                  f"prefix {translation.PREFIX}", f"map {t1_v4} {clat_address(t1_v4)}"),
                 (("-4", "route", "replace", str(ipaddress.ip_interface(t2.ipv4).network), "dev", CLAT_DEV),
                  ("-4", "route", "replace", f"{CLAT_V4}/32", "dev", CLAT_DEV),
                  ("-6", "route", "replace", str(CLAT_PREFIX), "dev", CLAT_DEV), *past["r1"]),
                 False)
    plat = translation.nat64("stateful", "")
    return clat, replace(plat, router="r2", routes=(*plat.routes, *past["r2"]))
