"""A forwarding table of a shape (:mod:`.shapes`), the same for the same
seed.

One family's prefixes are drawn length by length, shortest first: of each
length's count (its share of the table, rounded so that the counts sum to
the table's size), :data:`~.shapes.NESTED_SHARE` lie inside a shorter
prefix already drawn (a more-specific, as about half of a real table's
are), the rest anywhere in the family's unicast space (IPv4 1.0.0.0 up to
224.0.0.0, IPv6 2000::/3). No prefix is drawn twice, and none lies inside
a block that is not to be routed by the table: the benchmarking blocks
the labs' own addresses come from (a table prefix may cover them; the
lab's routes are more specific), IPv4's loopback and link-local blocks
and IPv6's documentation prefix. A dense shape is host routes on
consecutive addresses.
"""

from __future__ import annotations

import ipaddress
import random
from dataclasses import dataclass

from ..core.address_blocks import BENCHMARKING
from ..core.errors import UsageError
from .shapes import BITS, NESTED_SHARE, Shape, TableKind

#: IP version → the unicast space a table's prefixes are drawn from: [start, end) as ints.
SPACE = {4: (0x01000000, 0xE0000000), 6: (0x2 << 124, 0x4 << 124)}
#: IP version → the blocks no table prefix lies inside.
KEEP_OUT = {4: tuple(n for n in BENCHMARKING if n.version == 4) + (ipaddress.ip_network("127.0.0.0/8"),
                                                                  ipaddress.ip_network("169.254.0.0/16")),
            6: tuple(n for n in BENCHMARKING if n.version == 6) + (ipaddress.ip_network("2001:db8::/32"),)}
#: Draws per prefix before a length is given up as full (a shape that asks for more than its space holds).
MAX_DRAWS_PER_PREFIX = 64


@dataclass(frozen=True)
class Prefixes:
    """One family's routes: ``(network, length)`` pairs, the network an int
    with its host bits zero, sorted."""

    version: int
    routes: tuple[tuple[int, int], ...]

    def __len__(self) -> int:
        return len(self.routes)

    def lengths(self) -> dict[int, int]:
        """Prefix length → how many."""
        out: dict[int, int] = {}
        for _, length in self.routes:
            out[length] = out.get(length, 0) + 1
        return dict(sorted(out.items()))


@dataclass(frozen=True)
class Table:
    """A forwarding table: its IPv4 and IPv6 routes, and where it came from
    (a name and seed, or a file)."""

    ipv4: Prefixes
    ipv6: Prefixes
    source: str


def counts(shape: Shape) -> dict[int, int]:
    """Prefix length → how many of a ``dfz`` shape's ``count``: each
    length's share, rounded by the largest remainders so that they sum to
    ``count``."""
    exact = {length: share * shape.count for length, share in shape.lengths.items()}
    out = {length: int(x) for length, x in exact.items()}
    short = shape.count - sum(out.values())
    for length in sorted(exact, key=lambda k: (out[k] - exact[k], k))[:short]:
        out[length] += 1
    return out


def kept_out(version: int, network: int, length: int) -> bool:
    """Whether a prefix lies inside (or is) a block no table prefix may lie in."""
    bits = BITS[version]
    for block in KEEP_OUT[version]:
        if length >= block.prefixlen and network >> (bits - block.prefixlen) == int(block.network_address) >> (bits - block.prefixlen):
            return True
    return False


def _draw(version: int, shape: Shape, rng: random.Random) -> tuple[tuple[int, int], ...]:
    bits = BITS[version]
    lo, hi = SPACE[version]
    seen: set[tuple[int, int]] = set()
    shorter: list[tuple[int, int]] = []
    for length, n in sorted(counts(shape).items()):
        host = bits - length
        drawn: list[tuple[int, int]] = []
        draws = 0
        while len(drawn) < n:
            draws += 1
            if draws > MAX_DRAWS_PER_PREFIX * n + 1000:
                raise UsageError(f"IPv{version}: cannot draw {n:,} distinct /{length} prefixes in its space", "table")
            if shorter and rng.random() < NESTED_SHARE:
                parent, parent_length = shorter[rng.randrange(len(shorter))]
                network = parent | (rng.getrandbits(length - parent_length) << host if length > parent_length else 0)
            else:
                network = rng.randrange(lo >> host, hi >> host) << host
            if (network, length) in seen or kept_out(version, network, length):
                continue
            seen.add((network, length))
            drawn.append((network, length))
        shorter.extend(drawn)
    return tuple(sorted(seen))


def _dense(version: int, shape: Shape) -> tuple[tuple[int, int], ...]:
    bits = BITS[version]
    return tuple((shape.dense_base + i, bits) for i in range(shape.count))


def prefixes(version: int, shape: Shape, seed: int) -> Prefixes:
    """One family's routes of ``shape``, the same for the same ``seed``."""
    if shape.dense_base is not None:
        return Prefixes(version, _dense(version, shape))
    if not shape.count:
        return Prefixes(version, ())
    return Prefixes(version, _draw(version, shape, random.Random(f"v6bench-fib-{version}-{seed}")))


def table(kind: TableKind, seed: int) -> Table:
    """The table ``kind`` for ``seed``: IPv4's and IPv6's routes."""
    return Table(prefixes(4, kind.ipv4, seed), prefixes(6, kind.ipv6, seed), f"{kind.name}, seed {seed}")
