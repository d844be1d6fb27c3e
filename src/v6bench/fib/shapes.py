"""The shapes of a forwarding table: how its prefixes' lengths are
distributed, and the tables v6bench knows by name.

The default-free zone's distributions, as of 2026, approximated from the
published routing-table reports (Geoff Huston's BGP table reports, the
CIDR report): IPv4 /24 about 60 %, /22 12 %, /23 11 %, /21 6 %, /20 5 %,
mean length about 22.8; IPv6 /48 about 47 %, /32 14 %, /44 9 %, /40 8 %,
/36 4 %, mean about 42.6. The shares of the other lengths are this
module's, chosen so that the means come out as published; the tests
check both (``tests/unit/test_fib.py``). About half of a real table's
prefixes lie inside another of its prefixes (more-specifics);
:data:`NESTED_SHARE` of a generated table's do.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

from ..core.errors import UsageError

#: Prefix length → share of the table's prefixes [fraction]; each sums to 1.
DFZ_IPV4 = MappingProxyType({
    8: 0.0001, 9: 0.0001, 10: 0.0003, 11: 0.0006, 12: 0.0012, 13: 0.0022, 14: 0.0035, 15: 0.005,
    16: 0.01, 17: 0.007, 18: 0.012, 19: 0.023,
    20: 0.05, 21: 0.06, 22: 0.12, 23: 0.11, 24: 0.595,
})
DFZ_IPV6 = MappingProxyType({
    19: 0.0005, 20: 0.001, 22: 0.001, 24: 0.002, 28: 0.008, 29: 0.022, 30: 0.004, 31: 0.003,
    32: 0.14, 33: 0.015, 34: 0.015, 35: 0.006, 36: 0.04, 38: 0.012, 40: 0.08, 42: 0.013,
    44: 0.09, 45: 0.01, 46: 0.05, 47: 0.0175, 48: 0.47,
})

#: The share of a generated table's prefixes placed inside a shorter prefix of the same table.
NESTED_SHARE = 0.4

#: IP version → its address width [bits].
BITS = MappingProxyType({4: 32, 6: 128})


@dataclass(frozen=True)
class Shape:
    """How one family's part of a table is made: ``count`` prefixes with
    lengths drawn as ``lengths`` says (``dfz``), or ``count`` host routes
    (/32, /128) on consecutive addresses from ``dense_base`` (the
    best-case control of FD.io CSIT's tests: no two share a lookup path
    beyond the last bits)."""

    count: int
    lengths: MappingProxyType | None = None
    dense_base: int | None = None


@dataclass(frozen=True)
class TableKind:
    """A table by name: IPv4's and IPv6's shapes, and what it stands for."""

    name: str
    ipv4: Shape
    ipv6: Shape
    summary: str


#: Where the dense tables' host routes start: 20.0.0.0 and 2a00:: (a 1 M-route table stays in 20.0.0.0/12).
DENSE_BASE = MappingProxyType({4: 0x14000000, 6: 0x2A00 << 112})


def _dfz(name: str, ipv4: int, ipv6: int, summary: str) -> TableKind:
    return TableKind(name, Shape(ipv4, DFZ_IPV4), Shape(ipv6, DFZ_IPV6), summary)


def _dense(name: str, count: int) -> TableKind:
    return TableKind(name, Shape(count, dense_base=DENSE_BASE[4]), Shape(count, dense_base=DENSE_BASE[6]),
                     f"{count:,} /32 and {count:,} /128 host routes on consecutive addresses (best case)")


#: The tables by name.
TABLES = MappingProxyType({k.name: k for k in (
    TableKind("none", Shape(0), Shape(0), "no routes beyond the lab's own"),
    _dfz("internet", 1_000_000, 230_000, "about today's default-free zone: 1 M IPv4 and 230 k IPv6 prefixes"),
    _dfz("10k", 10_000, 10_000, "10,000 prefixes a family, lengths as the default-free zone's"),
    _dfz("100k", 100_000, 100_000, "100,000 prefixes a family, lengths as the default-free zone's"),
    _dfz("1m", 1_000_000, 1_000_000, "1,000,000 prefixes a family, lengths as the default-free zone's"),
    _dense("dense-10k", 10_000),
    _dense("dense-100k", 100_000),
    _dense("dense-1m", 1_000_000),
)})


def table_kind(name: str) -> TableKind:
    if not isinstance(name, str) or name not in TABLES:
        raise UsageError(f"{name!r} is not a table (known: {', '.join(TABLES)})", "table")
    return TABLES[name]


def mean_length(lengths: MappingProxyType) -> float:
    """The mean prefix length [bits] a distribution gives."""
    return sum(length * share for length, share in lengths.items())
