"""Host-stack throughput (seed 001; seed 004 §2.2): TCP and UDP goodput
between the tester hosts' own stacks, by message size, over IPv4 and
IPv6, with both hosts' CPU use, on whatever path the lab has (p2p: the
hosts back to back; a, b, chain:N: through the routers). iperf3 measures
(:mod:`v6bench.host.iperf`); each (protocol, family, message size,
repetition) is one stored test. This is not RFC 2544 throughput: nothing
here searches for a loss-free rate, and a host's stack, not only the DUT,
can be the bottleneck (on the emulated lab both hosts share the tester's
CPUs).
"""

from __future__ import annotations

from dataclasses import dataclass
from ..core.params import check
from ..core.tester import HOST_PROTOCOLS as PROTOCOLS, message_problem
from ..core.tester import HostTester

#: Seed 001 Fig. 1–4: 64 B to 64 KB; 1408 is the largest its Fig. 2 and 4 show
#: below the MTU, 65507 the largest UDP datagram.
DEFAULT_MESSAGE_SIZES = (64, 256, 1024, 1408, 16384, 65507)


@dataclass(frozen=True)
class Params:
    protocols: tuple[str, ...] = PROTOCOLS
    message_sizes: tuple[int, ...] = DEFAULT_MESSAGE_SIZES
    duration_s: float = 10.0

    def __post_init__(self) -> None:
        check(bool(self.protocols), "protocols", "give tcp, udp or both")
        for p in self.protocols:
            check(p in PROTOCOLS, "protocols", f"{p!r} is not one of {', '.join(PROTOCOLS)}")
        check(bool(self.message_sizes), "message_sizes", "give at least one size")
        for m in self.message_sizes:
            why = message_problem(self.protocols, m)
            check(why is None, "message_sizes", why or "")
        check(1 <= self.duration_s <= 3600, "duration_s", f"{self.duration_s:g} s is outside 1..3600")


def variants(p: Params) -> list[dict]:
    return [{"protocol": proto, "message_bytes": m} for proto in p.protocols for m in p.message_sizes]


def run(t: HostTester, p: Params, version: int, variant: dict) -> dict:
    return t.stream(version, variant["protocol"], variant["message_bytes"], p.duration_s)
