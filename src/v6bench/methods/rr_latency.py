"""Router latency by UDP request/response (seed 004 §2.1, Table 1): the
one-way delay between the tester hosts' own stacks (round-trip time / 2)
through the lab, minus the same over a direct link between the same two
hosts (the baseline, measured in the same test), is the latency the
router adds. Payload sizes are IP payloads (UDP header and data): seed
004 used 8 … 1024 and the MTU's (1480 for IPv4, 1460 for IPv6 at MTU
1500; ``mtu_payload``). Every exchange's round trip is kept in a
histogram (engine ``rr``, :mod:`v6bench.host.rr`); the mean is seed 004's
figure.

On ``p2p`` there is no router: the test reports the back-to-back delay
alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.params import check
from ..core.tester import HostTester

#: Seed 004 Table 1's payload sizes below the MTU [bytes].
DEFAULT_PAYLOAD_SIZES = (8, 16, 32, 64, 128, 256, 512, 1024)
MAX_PAYLOAD = 9000


@dataclass(frozen=True)
class Params:
    payload_sizes: tuple[int, ...] = DEFAULT_PAYLOAD_SIZES
    #: Also the largest payload the path carries whole (seed 004's 1480 / 1460).
    mtu_payload: bool = True
    duration_s: float = 5.0

    def __post_init__(self) -> None:
        for m in self.payload_sizes:
            check(8 <= m <= MAX_PAYLOAD, "payload_sizes", f"{m} bytes is outside 8..{MAX_PAYLOAD} (IP payload: UDP header and data)")
        check(bool(self.payload_sizes) or self.mtu_payload, "payload_sizes", "give at least one size, or mtu_payload = true")
        check(0.5 <= self.duration_s <= 3600, "duration_s", f"{self.duration_s:g} s is outside 0.5..3600")


def variants(p: Params) -> list[dict]:
    return [{"payload_bytes": m} for m in p.payload_sizes] + ([{"payload_bytes": "mtu"}] if p.mtu_payload else [])


def run(t: HostTester, p: Params, version: int, variant: dict) -> dict:
    size = variant["payload_bytes"]
    payload = t.mtu_payload(version) if size == "mtu" else int(size)
    return t.rr(version, payload, p.duration_s)
