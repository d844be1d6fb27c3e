"""The DUT's configuration beyond forwarding, as nftables rule sets in R1.

``limit_fps`` makes a DUT of known capacity (the check of every throughput
search): each of R1's input interfaces gets
``limit rate over N/second burst N/40 packets drop``, so R1 forwards at
most N frames/s per direction (plus a 25-ms bucket), both IP versions
together.

``acl`` (0 for none, or 1 … :data:`ACL_MAX` rules; seed 000 uses 1 and
25) gives R1 access lists in the style of seed 000 §3 and RFC 2544 §11.4,
one per IP version, on the test direction (t1 → t2):

- 1 rule: permit the test destination (t2's address);
- K rules: K − 1 that deny other destinations (``198.19.100.0/24``,
  ``198.19.101.0/24`` …, ``2001:2:0:64::/64``, ``2001:2:0:65::/64`` …, all
  in the benchmarking blocks) and, last, the permit, so every test frame
  is compared with all K (25: seed 000's list);
- then the implicit deny of a router's ACL: anything else is dropped.

``acl_family``: which IP version's frames walk their list: ``both`` (seed
000), or only ``ipv4`` or ``ipv6``, the other forwarded unfiltered. In a
trial carrying both families that is a scenario beside its control in the
same trial: the list's cost is the difference between the families, less
the difference without it (``bench/sensitivity.py``).

The permit and the implicit deny count what they match (as ``show
access-lists`` does); :func:`acl_counters` reads them, and every trial
reports the difference (``dut.acl``).

``acl_at``: ``in`` filters frames arriving on R1's input port (the one
toward t1), ``out`` frames leaving by its output port (toward t2), ``both``
does both, so a frame is checked twice. Linux filters forwarded frames in
the forward hook, after the route lookup; that is where both lists run
(``iifname`` / ``oifname``). The permit rule returns to the forward chain
rather than accepting, so ``both`` really walks the list twice. Frames of
the reverse direction (bidirectional tests) and frames to or from R1 itself
(ARP, ND, echo to R1) are not filtered, as in seed 000, where the lists sat
on Fa0/0 in and Fa0/1 out.

``acl_udp_only``: the permit rule also requires UDP (``meta l4proto udp``):
for IPv6 the DUT must walk the extension header chain to find the
transport header (seed 000's extension header test); for IPv4 it reads the
protocol field.

``nat44``: IPv4 source NAT on R1 (seed 003's "IPv4 network with NAT"):
frames of the test direction leaving by R1's output port get R1's address
on that port as their source (``snat``, ports kept where free). It sits in
a table of its own of the ``ip`` family, so connection tracking, which NAT
needs, runs for IPv4 only; IPv6 is forwarded as before.

``nat64``: ``stateless`` or ``stateful`` NAT64 on R1 (RFC 8219 §4's
single translation; :mod:`v6bench.lab.model.translation`): t1's IPv6
frames go to t2's IPv4 address embedded in the NAT64 prefix and arrive
as IPv4, counted as one stream (the engine's ``rx_ip_version``); IPv4 is
forwarded as before. With ``scope = "flow2"`` only IPv6's second flow is
translated and its first flow, native IPv6 in the same trials, is the
control; ``nat44`` may join it there (IPv4's flow 2 through source NAT),
so one trial holds native IPv4 and IPv6, NAT44 and NAT64. The stateful
mode's source NAT is in a table of its own (``v6bench_nat64``).

``xlat``: ``464``, double translation (464XLAT, RFC 6877) on topology b:
a CLAT on R1 and a PLAT on R2 (:mod:`v6bench.lab.model.xlat`); t1's IPv4
crosses the link between them as IPv6 and arrives at t2 as IPv4, IPv6
is forwarded as before. The PLAT keeps state (its source NAT is in a
table of its own, as the stateful mode's). ``dslite``: encapsulation
(DS-Lite, RFC 6333) on topology b of VM routers, a B4 on R1 and an AFTR
with NAT44 on R2 (:mod:`v6bench.lab.model.dslite`).

``max_connections`` and ``max_new_fps`` make a DUT of known connection
capacity and establishment rate, the known answers of RFC 9693's metrics
(:mod:`v6bench.methods.stateful`), as ``limit_fps`` is throughput's: R1
drops an IPv4 packet that would open a connection beyond N held toward
its destination (``ct count over N``, every test connection goes to t2's
address), or beyond R new connections a second (``ct state new limit rate
over R/second``, a bucket of :data:`NEW_BURST` packets). Either makes R1
track connections.

``table``: a forwarding table like the Internet's (:mod:`v6bench.fib`) in
every router on the path from t1 to t2, each prefix routed toward t2
(:mod:`v6bench.lab.emulated.fib_load`, which measures the load and the FIB learning
time); t1's frames then walk ``destinations`` addresses a family, each
inside a different prefix of the table that is its longest match, in a
seeded permutation (the engine's ``walk``), so each frame's lookup walks
the table. ``table_seed`` makes the table (the same seed, the same table).

``rps``: receive packet steering on namespace routers, over the DUT's
CPUs or every CPU (:mod:`v6bench.lab.emulated.rps`).

``shape``: the routers' interfaces are shaped to the link speed
(:mod:`v6bench.lab.emulated.shape`, tc, not nftables). ``tunnel``: IPv4 in IPv6 or
IPv6 in IPv4 between R1 and R2 on topology b (:mod:`v6bench.lab.model.tunnel`).

``scope``: ``all`` (every test frame meets the ACL, the NAT, the
tunnel), or ``flow2``: only the second flow of each family does, told by
its UDP source ports (:data:`v6bench.core.frames.FLOW2_SRC_PORTS`, 49185-65534,
fixed or RFC 4814 ports alike), and the
first flow, in the same trials, is its control (docs/report.md,
"Scenarios on a flow"). The list's jumps also match ``udp sport``; the NAT
rewrites only that flow and every other test frame from t1's subnet is
``notrack`` (so the control is not connection-tracked either); the
tunnel's routes move to a table of their own, which an ``ip rule``
on each router selects for that port (lab/model/tunnel.py). One scenario at a
time; the rate limiter and shaping are never scoped. A scoped lab takes
trials of two flows only (``--flows 2``).

The rule set (lab/emulated/ruleset.py) is applied with ``nft -f -``
inside R1's namespace or by a VM router's startup script, and recorded
with every result.
"""

from __future__ import annotations

from typing import Any

import ipaddress
from dataclasses import asdict, dataclass

from ...core.frames import Traffic, check_scope
from ...core.params import check
from ...fib.shapes import TABLES
from . import translation, tunnel
from .xlat import MODES as XLAT_MODES

#: A VM router that tracks connections (a DUT that keeps state, the flowtable data plane): its connection table
#: as large as a router's (the guest's 256 MiB would size it at a few thousand, below RFC 9693's phases).
CONNTRACK_SYSCTLS = {"net.netfilter.nf_conntrack_buckets": 16384, "net.netfilter.nf_conntrack_max": 65536}
#: The longest list: its denies' IPv4 destinations stay in 198.19.100.0/24 … 198.19.249.0/24.
ACL_MAX = 150
ACL_AT = ("in", "out", "both")
ACL_FAMILIES = ("both", "ipv4", "ipv6")
#: First of the destinations a list's denies name (one /24 or /64 each).
#: Destinations a family a table's trials walk at most (the engine walks up to 4 M; the lab keeps them as text).
MAX_DESTINATIONS = 1_000_000
DENY_BASE_V4 = ipaddress.ip_network("198.19.100.0/24")
DENY_BASE_V6 = ipaddress.ip_network("2001:2:0:64::/64")
#: Receive packet steering: over the DUT's CPUs, or over every CPU (the tester's too).
RPS_MODES = ("dut", "all")


@dataclass(frozen=True)
class DutConfig:
    """What R1 does beyond forwarding (module docstring); the fields are the
    ``[dut]`` keys of a campaign."""

    limit_fps: int = 0
    acl: int = 0
    acl_at: str = "in"
    acl_udp_only: bool = False
    acl_family: str = "both"
    nat44: bool = False
    shape: bool = False
    tunnel: str = ""  # "", "4in6", "6in4"; on VM routers also "gre6in4", "gre4in6" (topology b; lab/model/tunnel.py)
    #: "", "stateless" or "stateful": NAT64 on R1 (lab/model/translation.py).
    nat64: str = ""
    #: "" or "464": 464XLAT, a CLAT on R1 and a PLAT on R2 (lab/model/xlat.py).
    xlat: str = ""
    #: DS-Lite: a B4 on R1 and an AFTR on R2, VM routers (lab/model/dslite.py).
    dslite: bool = False
    #: Receive packet steering on namespace routers: "" none, "dut" over the DUT's CPUs, "all" over every CPU
    #: (lab/emulated/rps.py).
    rps: str = ""
    #: A DUT of known connection capacity and establishment rate (RFC 9693's known answers): R1 holds at most this
    #: many IPv4 connections to a destination (nftables ``ct count``), and opens at most this many a second; 0: none.
    max_connections: int = 0
    max_new_fps: int = 0
    scope: str = "all"
    #: A forwarding table like the Internet's in every router on the path (fib.shapes.TABLES; lab/emulated/fib_load.py),
    #: made from ``table_seed``; t1's frames then walk ``destinations`` of its prefixes a family.
    table: str = "none"
    table_seed: int = 1
    destinations: int = 4096

    def __post_init__(self) -> None:
        check(0 <= self.limit_fps <= 100_000_000, "limit_fps", f"{self.limit_fps} is outside 0..100000000 frames/s")
        check(isinstance(self.acl, int) and not isinstance(self.acl, bool) and 0 <= self.acl <= ACL_MAX, "acl",
              f"{self.acl!r} is not 0 (none) or a number of rules from 1 to {ACL_MAX}")
        check(self.acl_at in ACL_AT, "acl_at", f"{self.acl_at!r} is not in, out or both")
        check(self.acl_family in ACL_FAMILIES, "acl_family", f"{self.acl_family!r} is not both, ipv4 or ipv6")
        check(not self.acl_udp_only or self.acl > 0, "acl_udp_only", "needs an ACL (acl = 1 or more rules)")
        check(self.acl_family == "both" or self.acl > 0, "acl_family", "needs an ACL (acl = 1 or more rules)")
        check(self.tunnel in ("", *tunnel.NAMES), "tunnel", f"{self.tunnel!r} is not one of {', '.join(tunnel.NAMES)}")
        # Linux encapsulates IPv4 into SRv6 at R1's route lookup (a seg6
        # lightweight tunnel redirects the input), so the IPv4 frames never
        # reach the IPv4 forward and postrouting hooks where the ACL and
        # the NAT run; the IPv6 ACL would see the outer header instead.
        check(not (self.tunnel == "4in6" and self.acl), "acl",
              "not with the 4in6 tunnel: R1 encapsulates IPv4 before its forward hook, where the ACL runs")
        check(not (self.tunnel == "4in6" and self.nat44), "nat44",
              "not with the 4in6 tunnel: R1 encapsulates IPv4 before the NAT hook")
        check(self.nat64 in ("", *translation.MODES), "nat64",
              f"{self.nat64!r} is not one of {', '.join(translation.MODES)} (or none)")
        check(self.xlat in ("", *XLAT_MODES), "xlat", f"{self.xlat!r} is not one of {', '.join(XLAT_MODES)} (or none)")
        check(not (self.xlat and (self.nat64 or self.nat44 or self.tunnel or self.acl or self.limit_fps
                                  or self.max_connections or self.max_new_fps)), "xlat",
              "464XLAT is the DUT's scenario alone: not with nat64, nat44, a tunnel, an ACL or limits")
        check(not (self.xlat and self.scope != "all"), "xlat", "464XLAT translates every IPv4 frame: scope all")
        check(not (self.dslite and (self.xlat or self.nat64 or self.nat44 or self.tunnel or self.acl or self.limit_fps
                                    or self.max_connections or self.max_new_fps or self.scope != "all")), "dslite",
              "DS-Lite is the DUT's scenario alone, on every frame: not with xlat, nat64, nat44, a tunnel, an ACL, "
              "limits or a scope")
        check(self.rps in ("", *RPS_MODES), "rps", f"{self.rps!r} is not one of {', '.join(RPS_MODES)} (or none)")
        for key in ("max_connections", "max_new_fps"):
            v = getattr(self, key)
            check(isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 100_000_000, key,
                  f"{v!r} is not 0 (none) or a whole number up to 100000000")
        check(not (self.nat64 and self.tunnel), "nat64", "not with a tunnel: R1 translates, nothing encapsulates")
        check(not (self.nat64 and self.acl), "nat64",
              "not with an ACL: the lists permit t2's own addresses, and a translated frame is sent to the NAT64 prefix")
        check_scope(self.scope)
        check(self.table in TABLES, "table", f"{self.table!r} is not a table (known: {', '.join(TABLES)})")
        check(isinstance(self.table_seed, int) and not isinstance(self.table_seed, bool) and self.table_seed >= 0,
              "table_seed", f"{self.table_seed!r} is not a whole number >= 0")
        most = min(TABLES[self.table].ipv4.count, TABLES[self.table].ipv6.count, MAX_DESTINATIONS)
        check(self.table == "none" or (isinstance(self.destinations, int) and not isinstance(self.destinations, bool)
                                       and 1 <= self.destinations <= most), "destinations",
              f"{self.destinations!r} is not 1 to {most:,} (at most one a prefix of the table's smaller family, "
              f"and {MAX_DESTINATIONS:,})")
        check(self.table == "none" or self.scope == "all", "scope",
              "a table is in the router for every flow: no flow2 scope with it")
        check(not ((self.nat64 or self.xlat or self.dslite) and self.has_table),
              "nat64" if self.nat64 else "xlat" if self.xlat else "dslite",
              "not with a table (its destinations are t2's, not translated)")
        scenarios = sum(map(bool, (self.acl, self.nat44 or self.nat64, self.tunnel)))
        check(self.scope == "all" or scenarios == 1, "scope",
              "flow2 pairs one scenario with its control: give exactly one of acl, nat44 (and nat64) and tunnel "
              f"(given: {scenarios})")

    @property
    def keeps_state(self) -> bool:
        """Whether the DUT tracks connections of test frames (NAT44, stateful NAT64, 464XLAT's PLAT): a frame
        with a new 5-tuple opens a connection, so RFC 4814's pseudorandom ports need RFC 9693's phases
        (core/frames.PORTS)."""
        return (self.nat44 or self.nat64 == "stateful" or self.answers_only
                or bool(self.max_connections or self.max_new_fps))

    @property
    def answers_only(self) -> bool:
        """Whether t2's IPv4 reaches t1 only by answering t1's connections (464XLAT's PLAT, DS-Lite's AFTR on R2)."""
        return bool(self.xlat) or self.dslite

    @property
    def stateful_router(self) -> str:
        """The router whose connection table a test reads, sets and empties: R2 (464XLAT's PLAT, DS-Lite's
        AFTR) or R1."""
        return "r2" if self.answers_only else "r1"

    @property
    def known_limits_fps(self) -> tuple[int, ...]:
        """The rates [frames/s] the DUT is known to hold at most: its policer (``limit_fps``) and its limit on
        new connections (``max_new_fps``), where set. A phase that must lose nothing stays below them
        (trial/preliminary.rate_fps)."""
        return tuple(x for x in (self.limit_fps, self.max_new_fps) if x)

    @property
    def has_table(self) -> bool:
        """Whether the routers hold a generated table (and t1's frames walk it)."""
        return self.table != "none"

    def to_json(self) -> dict[str, Any]:
        """The fields, but a default scope and, without a table, the table's (records made before tables stay equal)."""
        quiet = {"scope": "all", "dslite": False, "rps": "",
                 **({"table": "none", "table_seed": 1, "destinations": 4096} if not self.has_table else {})}
        return {k: v for k, v in asdict(self).items() if k not in quiet or v != quiet[k]}

    @classmethod
    def from_json(cls, d: dict[str, Any] | None) -> "DutConfig":
        return cls(**(d or {}))

    def on_flow2(self) -> dict[int, str]:
        """What the second flow of each IP version meets that the first
        does not (``scope = "flow2"``), by IP version: ``{4: "IPv4 source
        NAT"}``; empty when the scenario is on every frame."""
        if self.scope != "flow2":
            return {}
        if self.tunnel:
            return {tunnel.carried(self.tunnel): f"{self.tunnel} tunnel"}
        if self.nat44 or self.nat64:
            return {**({4: "IPv4 source NAT"} if self.nat44 else {}),
                    **({6: translation.flow2_words(self.nat64)} if self.nat64 else {})}
        walk = {"both": (4, 6), "ipv4": (4,), "ipv6": (6,)}[self.acl_family]
        return {v: self._acl_words() for v in walk}

    def _acl_words(self) -> str:
        return (f"ACL of {self.acl} rule{'s' if self.acl > 1 else ''} at {self.acl_at}"
                + (", UDP only" if self.acl_udp_only else ""))

    def describe(self) -> str:
        parts = []
        if self.acl:
            parts.append(self._acl_words() + (f", {self.acl_family.replace('ipv', 'IPv')} frames only"
                                              if self.acl_family != "both" else ""))
        if self.nat44:
            parts.append("IPv4 source NAT")
        if self.nat64:
            parts.append(f"{self.nat64} NAT64 (prefix {translation.PREFIX})")
        if self.xlat:
            parts.append(f"464XLAT: CLAT on R1, stateful PLAT on R2 (prefix {translation.PREFIX})")
        if self.dslite:
            parts.append("DS-Lite: B4 on R1, AFTR with NAT44 on R2")
        if self.limit_fps:
            parts.append(f"limit {self.limit_fps:,} frames/s per direction")
        if self.max_connections:
            parts.append(f"at most {self.max_connections:,} connections")
        if self.max_new_fps:
            parts.append(f"at most {self.max_new_fps:,} new connections/s")
        if self.rps:
            parts.append("receive packet steering over " + ("the DUT's CPUs" if self.rps == "dut"
                                                            else "every CPU, the tester's included"))
        if self.shape:
            parts.append("egress shaped at link speed")
        if self.tunnel:
            parts.append(f"{self.tunnel} tunnel between R1 and R2")
        if self.scope == "flow2":
            parts.append("on each family's flow 2 only (flow 1 its control)")
        if self.has_table:
            parts.append(f"table {self.table} (seed {self.table_seed}: {TABLES[self.table].summary}), "
                         f"frames to {self.destinations:,} of its prefixes a family")
        return "; ".join(parts) or "plain forwarding"


def flow2_scenarios(dut: DutConfig, traffic: Traffic) -> dict[str, str]:
    """What the second flow of each IP version meets and the first does not,
    the DUT's scoped scenario and the test's scoped extension headers
    together, keyed by IP version as stored with a test (``{"6": "6in4
    tunnel"}``); the report compares those flows as a scenario and its
    control, and the others as A/A controls (docs/report.md)."""
    out: dict[str, list[str]] = {}
    for part in (dut.on_flow2(), traffic.on_flow2()):
        for version, words in part.items():
            out.setdefault(str(version), []).append(words)
    return {v: ", ".join(w) for v, w in sorted(out.items())}
