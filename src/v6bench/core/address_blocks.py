"""The address blocks for benchmarking (RFC 2544 App. C.2.2, 198.18.0.0/15;
RFC 5180 §5, 2001:2::/48): where the labs' own addresses come from, and
what a generated forwarding table keeps out of (:mod:`v6bench.fib`)."""

from __future__ import annotations

import ipaddress

BENCHMARKING = (ipaddress.ip_network("198.18.0.0/15"), ipaddress.ip_network("2001:2::/48"))
