"""The address blocks for benchmarking (RFC 2544 App. C.2.2, 198.18.0.0/15;
RFC 5180 §5, 2001:2::/48): where the labs' own addresses come from, and
what a generated forwarding table keeps out of (:mod:`v6bench.fib`)."""

from __future__ import annotations

import ipaddress

BENCHMARKING = (ipaddress.ip_network("198.18.0.0/15"), ipaddress.ip_network("2001:2::/48"))


def within(net: ipaddress.IPv4Network | ipaddress.IPv6Network) -> bool:
    """Whether ``net`` lies inside the benchmarking block of its family."""
    if isinstance(net, ipaddress.IPv4Network):
        return any(isinstance(b, ipaddress.IPv4Network) and net.subnet_of(b) for b in BENCHMARKING)
    return any(isinstance(b, ipaddress.IPv6Network) and net.subnet_of(b) for b in BENCHMARKING)
