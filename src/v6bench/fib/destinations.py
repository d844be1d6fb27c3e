"""Destinations that make each lookup walk the table: one address inside
each of N prefixes chosen from a family's routes, where that prefix is
the longest match (no more-specific of the table covers the address), so
that a frame's lookup ends at the chosen prefix's depth (RFC 2544 §12
asks for traffic to many destination networks). The same seed,
the same destinations, in the order drawn.
"""

from __future__ import annotations

import random

from ..core.errors import UsageError
from .generate import Prefixes, kept_out
from .shapes import BITS

#: Addresses tried inside one prefix before it is given up as covered by its more-specifics.
TRIES_PER_PREFIX = 16


def _covered(version: int, address: int, length: int, by_length: dict[int, set[int]]) -> bool:
    """Whether a route longer than ``length`` holds ``address``."""
    bits = BITS[version]
    return any(address >> (bits - k) << (bits - k) in nets for k, nets in by_length.items() if k > length)


def destinations(routes: Prefixes, n: int, seed: int) -> tuple[int, ...]:
    """``n`` addresses (ints), each inside a different prefix of ``routes``
    that is its longest match there, and outside the blocks the labs' own
    addresses come from. Prefixes wholly covered by their more-specifics
    are passed over; fewer than ``n`` such prefixes is an error."""
    if n < 1:
        raise UsageError(f"{n} destinations: give 1 or more", "destinations")
    if n > len(routes):
        raise UsageError(f"{n:,} destinations, but the IPv{routes.version} table has {len(routes):,} routes",
                         "destinations")
    bits = BITS[routes.version]
    by_length: dict[int, set[int]] = {}
    for network, length in routes.routes:
        by_length.setdefault(length, set()).add(network)
    rng = random.Random(f"v6bench-destinations-{routes.version}-{seed}")
    out: list[int] = []
    for i in rng.sample(range(len(routes)), len(routes)):
        network, length = routes.routes[i]
        for _ in range(TRIES_PER_PREFIX):
            address = network | (rng.getrandbits(bits - length) if length < bits else 0)
            if not _covered(routes.version, address, length, by_length) and not kept_out(routes.version, address, bits):
                out.append(address)
                break
        if len(out) == n:
            return tuple(out)
    raise UsageError(f"only {len(out):,} of the IPv{routes.version} table's prefixes are the longest match of an "
                     f"address of theirs; {n:,} asked", "destinations")
