"""A forwarding table as a plain prefix list: one prefix a line
(``203.0.113.0/24``, ``2001:db8::/32``), both families in one file, in any
order; ``#`` starts a comment; whatever follows the prefix on its line
(a next hop, an AS path) is ignored, so that a list cut from a router's
own table can be brought as it is. A prefix with host bits set is an
error naming its line: it is not what the router holds.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Iterable, TextIO

from ..core.errors import UsageError
from .generate import Prefixes, Table


def lines(table: Table) -> Iterable[str]:
    """The list's lines: a comment naming the table, then IPv4's prefixes and IPv6's, sorted."""
    yield f"# v6bench forwarding table: {table.source}; {len(table.ipv4):,} IPv4 and {len(table.ipv6):,} IPv6 prefixes"
    for network, length in table.ipv4.routes:
        yield f"{ipaddress.IPv4Address(network)}/{length}"
    for network, length in table.ipv6.routes:
        yield f"{ipaddress.IPv6Address(network)}/{length}"


def write(table: Table, path: Path | str) -> None:
    with open(path, "w") as f:
        for line in lines(table):
            f.write(line + "\n")


def parse(f: TextIO | Iterable[str], source: str) -> Table:
    """The table a list holds; ``source`` names it in errors (``FILE:LINE``) and in the table."""
    routes: dict[int, set[tuple[int, int]]] = {4: set(), 6: set()}
    for number, line in enumerate(f, 1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        word = text.split()[0]
        try:
            net = ipaddress.ip_network(word, strict=True)
        except ValueError as e:
            reason = "host bits set" if "host bits" in str(e) else "not a prefix (address/length)"
            raise UsageError(f"{source}:{number}: {word!r}: {reason}") from None
        routes[net.version].add((int(net.network_address), net.prefixlen))
    return Table(Prefixes(4, tuple(sorted(routes[4]))), Prefixes(6, tuple(sorted(routes[6]))), source)


def read(path: Path | str) -> Table:
    try:
        with open(path) as f:
            return parse(f, str(path))
    except OSError as e:
        raise UsageError(f"cannot read {path}: {e.strerror}", ("table",)) from None
