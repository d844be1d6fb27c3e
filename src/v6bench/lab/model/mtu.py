"""Link MTUs of the lab (``--mtu``): one for every link, and exceptions
per link, as in seed 000 Topology B ("MTU limitation from router 1 to
router 2").

``--mtu`` takes ``BYTES`` (every link) or a comma-separated list of
``LINK=BYTES`` where ``LINK`` is ``all`` or two node names joined by a dash
in either order (``r1-r2``, ``t1-r1``): ``r1-r2=500``, ``all=9000``,
``all=9000,r1-r2=1280``. The MTU is the IP MTU (the Linux interface MTU);
a frame is 18 bytes longer (Ethernet header and FCS). Both ends of a link
get it.

IPv4 links may be as small as 68 bytes (RFC 791 §3.2); IPv6 needs 1280
(RFC 8200 §5), and Linux switches IPv6 off on an interface below that. So
a link below 1280 carries IPv4 only: its routers get no IPv6 address on it,
and no IPv6 route through it (a trial that sends IPv6 across it is refused,
:mod:`v6bench.trial.path`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import ipaddress
import re
from dataclasses import dataclass

from ...core.errors import UsageError

if TYPE_CHECKING:
    from .topology import Node

IPV4_MIN = 68
IPV6_MIN = 1280
MAX = 9198  # a 9216-byte frame incl. 14 B Ethernet header and 4 B FCS
DEFAULT = 1500


def _order(node: str) -> tuple[int, str]:
    """t1 first, then the routers by number, then the other testers."""
    m = re.fullmatch(r"([a-z]+)(\d*)", node)
    kind, n = (m[1], int(m[2] or 0)) if m else (node, 0)
    return ((0 if n == 1 else 1000 + n) if kind == "t" else n, node)


def link_name(a: str, b: str) -> str:
    """The canonical name of the link between nodes ``a`` and ``b``, in
    path order: ``t1-r1``, ``r1-r2``, ``r2-t2``."""
    return "-".join(sorted((a, b), key=_order))


@dataclass(frozen=True)
class Mtus:
    """``all_bytes`` for every link, except ``links``: (canonical link name, bytes)."""

    all_bytes: int = DEFAULT
    links: tuple[tuple[str, int], ...] = ()

    def __post_init__(self) -> None:
        for name, value in (("all", self.all_bytes), *self.links):
            if not IPV4_MIN <= value <= MAX:
                raise UsageError(f"{name}={value} is outside {IPV4_MIN}..{MAX} bytes", "mtu")
        if self.all_bytes < IPV6_MIN:
            raise UsageError(f"all={self.all_bytes} leaves no link for IPv6 (at least {IPV6_MIN} bytes, RFC 8200 §5); "
                             f"set single links below {IPV6_MIN}, e.g. r1-r2={self.all_bytes}", "mtu")

    def of(self, a: str, b: str) -> int:
        """The MTU of the link between nodes ``a`` and ``b`` [bytes]."""
        return dict(self.links).get(link_name(a, b), self.all_bytes)

    @property
    def largest(self) -> int:
        return max([self.all_bytes, *(v for _, v in self.links)])

    def check(self, links: list[tuple[str, str]]) -> None:
        """Refuses exceptions for links the topology does not have (``links``: node pairs)."""
        known = {link_name(a, b) for a, b in links}
        for name, _ in self.links:
            if name not in known:
                raise UsageError(f"this topology has no link {name}; its links are {', '.join(sorted(known))}", "mtu")

    def __str__(self) -> str:
        if not self.links:
            return str(self.all_bytes)
        return ",".join([f"all={self.all_bytes}", *(f"{n}={v}" for n, v in self.links)])

    def to_json(self) -> int | str:
        return self.all_bytes if not self.links else str(self)

    @classmethod
    def from_json(cls, value: int | str) -> Mtus:
        return parse(str(value))


def parse(text: str | int) -> Mtus:
    """``1500`` or ``LINK=BYTES[,LINK=BYTES…]`` → :class:`Mtus` (see the module)."""
    text = str(text).strip()
    if re.fullmatch(r"\d+", text):
        return Mtus(int(text))
    all_bytes, links = DEFAULT, {}
    for part in text.split(","):
        m = re.fullmatch(r"\s*([a-z]+\d*)(?:-([a-z]+\d*))?\s*=\s*(\d+)\s*", part)
        if not m or (m[2] is None) != (m[1] == "all"):
            raise UsageError(f"{part.strip()!r} is not BYTES, all=BYTES or LINK=BYTES with LINK such as r1-r2", "mtu")
        if m[1] == "all":
            all_bytes = int(m[3])
        else:
            name = link_name(m[1], m[2])
            if name in links:
                raise UsageError(f"link {name} is given twice", "mtu")
            links[name] = int(m[3])
    return Mtus(all_bytes, tuple(sorted(links.items())))


def routes(node: Node, mtu: "Mtus") -> list[Any]:
    """The static routes of topology node ``node`` a router installs: none
    via a neighbour on a link below 1280 bytes, which carries no IPv6
    (RFC 8200 §5). One rule for namespace and VM routers."""
    v4_only = [ipaddress.ip_interface(i.ipv6).network for i in node.interfaces if mtu.of(i.node, i.peer_node) < IPV6_MIN]
    return [r for r in node.routes if not any(ipaddress.ip_address(r.gateway) in net for net in v4_only)]
