"""What a test frame becomes on its way through the lab: the links it
crosses, where it is fragmented, what it puts on each link, and so the
path's highest frame rate (RFC 2544 §20, RFC 8219 App. A).

Fragmentation (seed 000 Topology B; :mod:`v6bench.lab.model.mtu`):

- **IPv4** is fragmented by the routers (RFC 791 §2.3, Don't Fragment
  clear): a frame larger than a link's MTU + 18 bytes crosses that link as
  fragments. A frame larger than the sending tester's own link is
  fragmented by the tester at the source, as a host would.
- **IPv6** routers never fragment (RFC 8200 §5): the tester fragments at
  the source, with a Fragment header, to the path MTU (the smallest link
  MTU on the path; a host learns it by Path MTU Discovery, RFC 8201).

Each fragment but the last carries the most data that fits, a multiple
of 8 bytes (as Linux and the engine cut them, ``engine/src/frame.rs``);
a router fragments each arriving fragment again as needed. Rates and
counts stay in test frames (the whole datagrams); the line rate counts
every fragment with its own headers and 20 bytes of preamble and gap.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..lab import interface
from ..lab.protocol import Lab
from ..lab.model.tunnel import Tunnel
from ..lab.model.mtu import IPV6_MIN, Mtus, link_name
from ..lab.model.topology import parse_topology
from ..core.rates import ETHERNET_BYTES, l1_bytes

IP_HEADER = {4: 20, 6: 40}
FRAGMENT_HEADER_BYTES = 8  # IPv6 (RFC 8200 §4.5)


def fragment_data(data_bytes: int, header_bytes: int, mtu: int) -> list[int]:
    """Data bytes of each fragment when ``data_bytes`` behind a
    ``header_bytes`` header must fit ``mtu``: one piece if it fits."""
    if header_bytes + data_bytes <= mtu:
        return [data_bytes]
    step = max((mtu - header_bytes) // 8 * 8, 8)
    return [min(step, data_bytes - off) for off in range(0, data_bytes, step)]


@dataclass(frozen=True)
class LabPath:
    """The links from t1 to t2 (or another pair of testers), as (name, MTU)
    in order; the way back crosses them in reverse. ``tunnel``: the tunnel on the R1–R2 link, if any."""

    link_speed_bps: float
    links: tuple[tuple[str, int], ...]
    tunnel: Tunnel | None = None

    @classmethod
    def of(cls, lab: Lab) -> LabPath:
        """The path of a lab (:mod:`v6bench.lab.interface`)."""
        return cls.build(lab.topology, lab.link_speed_bps, lab.mtu, interface.tunnel(lab))

    @classmethod
    def build(cls, topology: str, link_speed_bps: float, mtu: Mtus, tunnel: Tunnel | None = None,
              src: str = "t1", dst: str = "t2") -> LabPath:
        """The path from tester ``src`` to ``dst`` (t1 to t2 by default)."""
        names = parse_topology(topology).path(src, dst)
        pairs = list(zip(names, names[1:]))
        return cls(link_speed_bps, tuple((link_name(a, b), mtu.of(a, b)) for a, b in pairs), tunnel or None)

    def mtus(self, reverse: bool = False) -> list[int]:
        m = [v for _, v in self.links]
        return m[::-1] if reverse else m

    def largest_payload(self, version: int) -> int:
        """The largest IP payload [bytes] of IP ``version`` every link
        carries whole: the smallest MTU less the IP header."""
        return min(self.mtus()) - IP_HEADER[version]

    def source_mtu(self, version: int, frame_size: int, reverse: bool = False) -> int | None:
        """The MTU the tester fragments ``frame_size``-byte frames of IP
        ``version`` to at the source, or None if it sends them whole."""
        mtus = self.mtus(reverse)
        mtu = mtus[0] if version == 4 else min(mtus)
        return mtu if frame_size - ETHERNET_BYTES > mtu else None

    def problem(self, version: int, frame_size: int) -> str | None:
        """Why frames of IP ``version`` cannot cross the path, or None."""
        if version == 6:
            low = [(n, m) for n, m in self.links if m < IPV6_MIN]
            if low:
                n, m = low[0]
                return (f"IPv6 cannot cross link {n} (MTU {m} < {IPV6_MIN} bytes, RFC 8200 §5): "
                        f"use an IPv4-only mix (100/0) on this lab")
        return None

    def wire_frames(self, version: int, frame_size: int, reverse: bool = False) -> list[list[int]]:
        """Per link in the direction's order, the sizes [bytes incl. FCS] of
        the frames one test frame becomes there."""
        header = IP_HEADER[version]
        data = frame_size - ETHERNET_BYTES - header
        source = self.source_mtu(version, frame_size, reverse)
        if version == 6:
            if source is None:
                return [[frame_size] for _ in self.links]
            pieces = fragment_data(data, header + FRAGMENT_HEADER_BYTES, source)
            return [[ETHERNET_BYTES + header + FRAGMENT_HEADER_BYTES + d for d in pieces] for _ in self.links]
        pieces = fragment_data(data, header, source) if source else [data]
        out = []
        for mtu in self.mtus(reverse):
            pieces = [p for d in pieces for p in fragment_data(d, header, mtu)]
            out.append([ETHERNET_BYTES + header + d for d in pieces])
        return out

    def line_fps(self, frame_size: int, ipv4_pct: int, bidirectional: bool = True) -> float:
        """The highest test-frame rate per direction [frames/s]: the link
        speed over the most layer-1 bytes a test frame (mixed by share)
        puts on any link of the path, fragments and tunnel overhead
        included."""
        shares = [(v, s / 100) for v, s in ((4, ipv4_pct), (6, 100 - ipv4_pct)) if s > 0]
        carried = self.tunnel
        worst = 0.0
        for reverse in (False, True) if bidirectional else (False,):
            names = [n for n, _ in self.links][:: -1 if reverse else 1]
            per_link = [0.0] * len(self.links)
            for v, share in shares:
                for j, frames in enumerate(self.wire_frames(v, frame_size, reverse)):
                    extra = carried.overhead_bytes if carried and carried.carried == v and names[j] == "r1-r2" else 0
                    per_link[j] += share * sum(l1_bytes(f + extra) for f in frames)
            worst = max(worst, *per_link)
        return self.link_speed_bps / (8 * worst)
