"""What test frames are, and the rules that make a choice of them valid.

One place for each rule that ``v6bench trial``, ``v6bench test`` and
campaign files share (issue 17): the smallest frame a mix takes, what ICMP
echo, extension headers and mesh traffic combine with. What they need of
a lab's topology and path is :mod:`v6bench.trial.fit`. Errors name the
field as a trial does (``mix``, ``frame_size``, ``bidirectional``,
``icmp_echo``, ``ext_headers``, ``mesh``); a campaign test renames them to
its own (:data:`TEST_FIELDS`).
"""

from __future__ import annotations

import math

import re
from dataclasses import dataclass

from . import ext_headers
from .errors import UsageError

#: Smallest frames (bytes incl. FCS, RFC 1242 §3.5) that hold the headers
#: and the engine's 18-byte signature: IPv4 14+20+8+18+4 = 64,
#: IPv6 14+40+8+18+4 = 84 (docs/engine-spec.md).
MIN_FRAME = {4: 64, 6: 84}
MAX_FRAME = 9216
#: Mesh traffic among a ``mesh:N`` lab's tester ports (trial/mesh.py).
MESH_PATTERNS = {
    "full": "every tester port to every other, round-robin (RFC 2889 §5.1.3)",
    "partial": "N-1 tester ports to the last one (seed 004 Fig. 4)",
}


def check_mesh_pattern(name: str, field: str = "mesh") -> None:
    """``name`` is one of :data:`MESH_PATTERNS`; errors name ``field``."""
    if name not in MESH_PATTERNS:
        raise UsageError(f"{name!r} is not one of {', '.join(MESH_PATTERNS)}", field)


#: Where ``icmp_echo`` sends its Echo Requests.
ICMP_ECHO_TARGETS = {"dut": "R1's own address on t1's link", "far": "t2, through the DUT; the engine answers"}


@dataclass(frozen=True)
class Mix:
    """IPv4/IPv6 shares in percent of frames (``90/10``); they sum to 100."""

    ipv4_pct: int
    ipv6_pct: int

    def __post_init__(self) -> None:
        if self.ipv4_pct < 0 or self.ipv6_pct < 0 or self.ipv4_pct + self.ipv6_pct != 100:
            raise UsageError(f"{self} must be two shares summing to 100", "mix")

    def __str__(self) -> str:
        return f"{self.ipv4_pct}/{self.ipv6_pct}"

    @property
    def versions(self) -> list[tuple[int, int]]:
        """(IP version, share) for each family with a share above zero."""
        return [(v, s) for v, s in ((4, self.ipv4_pct), (6, self.ipv6_pct)) if s > 0]

    @property
    def smallest_frame(self) -> int:
        """The smallest frame [bytes incl. FCS] every family of the mix fits in."""
        return max(MIN_FRAME[v] for v, _ in self.versions)


#: The mix a paired family comparison sends in place of the pure mixes: both families interleaved in every trial.
PAIRED_MIX = Mix(50, 50)
PURE_MIXES = (Mix(100, 0), Mix(0, 100))


def paired_mixes(mixes: tuple[Mix, ...]) -> tuple[Mix, ...]:
    """``mixes`` with IPv4 alone and IPv6 alone (``100/0`` and ``0/100``,
    both given) replaced by :data:`PAIRED_MIX` where the first of them
    stood: a test that compares the families paired carries both in each
    trial (docs/report.md, "Paired comparisons"). Mixes without both pure
    ones are kept as they are (a mixed mix is paired already)."""
    if not all(m in mixes for m in PURE_MIXES):
        return mixes
    out: list[Mix] = []
    for m in mixes:
        m = PAIRED_MIX if m in PURE_MIXES else m
        if m not in out:
            out.append(m)
    return tuple(out)


def parse_mix(text: str) -> Mix:
    """``IPV4/IPV6`` percentages: ``100/0``, ``90/10``, ``50/50``, ``0/100``."""
    m = re.fullmatch(r"\s*(\d{1,3})\s*/\s*(\d{1,3})\s*", text)
    if not m:
        raise UsageError(f"{text!r} is not IPV4/IPV6 percentages such as 90/10", "mix")
    a, b = int(m[1]), int(m[2])
    if a + b != 100:
        raise UsageError(f"{text!r}: the shares sum to {a + b}, not 100", "mix")
    return Mix(a, b)


@dataclass(frozen=True)
class Traffic:
    """What a test's frames are besides mix and size: an IPv6 extension
    header preset, or ICMP echo to a target (``--ext-headers``,
    ``--icmp-echo``; campaign test keys of the same names), and in how many
    identical flows each family is sent (``flows``, ``--flows``: 2 makes
    the second flow an A/A control inside every trial, docs/report.md),
    and whether the extension headers ride on every IPv6 frame or only on
    the second flow's (``ext_headers_scope``, ``--ext-headers-scope``, :data:`SCOPES`: the first
    flow is then their control in the same trial). Stored with each test
    (``params_json``); a test reuses only a throughput measured with the
    same frames (the number of flows does not change them, the scope does)."""

    ext_headers: str | None = None
    icmp_echo: str | None = None
    flows: int = 1
    ext_headers_scope: str = "all"
    #: The streams sent in runs of this many seconds each in turn instead of frame by frame (the engine's
    #: ``tx_run_frames``), so that the DUT's CPU time can be read per family inside the trial (lab/machine/cost.py,
    #: :func:`~v6bench.lab.machine.cost.runs`); None: frame by frame (``runs_s``, ``--runs``).
    runs_s: float | None = None
    #: The UDP ports of the test frames (:data:`PORTS`, ``ports``, ``--ports``): RFC 4814's pseudorandom ports,
    #: one 5-tuple a stream, or ``auto`` (RFC 4814's; :func:`ports_used`).
    ports: str = "auto"
    #: Through a DUT that keeps state, with RFC 4814's ports: how many connections each stream walks, all of them
    #: opened by RFC 9693's preliminary phase before every trial (:func:`connection_ports`; trial/preliminary.py).
    preliminary_connections: int = 10_000
    #: The preliminary phase's rate per sending port [frames/s]: below the DUT's connection establishment rate.
    preliminary_rate_fps: float = 10_000.0
    #: With two flows: ``"n/m"``, n of every m frames of a family are flow 2's (the foreground, which meets a
    #: scenario scoped to it: a translator, NAT44), the other m - n flow 1's (the background, native): RFC 8219's
    #: foreground and background traffic as siitperf sends it (:func:`flow_weights`).
    foreground: str = "1/2"
    #: How many source and how many destination addresses t1's frames walk (and t2's, back), each in a seeded
    #: permutation of a range every lab routes (lab/model/topology.SOURCES, DESTINATIONS), so that a DUT's
    #: receive-side scaling sees many flows (draft-lencse-bmwg-multiple-ip-addresses); 1: the testers' own.
    addresses: int = 1

    def frames_json(self) -> dict:
        """The stored keys that say what the frames are (a throughput is reused only with the same); ``ports``
        always (runs stored before it sent fixed ports, and read back so); the preliminary phase's where they are
        not their defaults (runs stored before it had none)."""
        return {"ext_headers": self.ext_headers, "icmp_echo": self.icmp_echo,
                **({"ext_headers_scope": self.ext_headers_scope} if self.ext_headers_scope != "all" else {}),
                "ports": self.ports,
                **{k: getattr(self, k) for k in ("preliminary_connections", "preliminary_rate_fps", "addresses")
                   if getattr(self, k) != getattr(Traffic, k)}}

    def to_json(self) -> dict:
        """The stored keys; ``flows``, ``ext_headers_scope`` and ``foreground`` only where they are not
        their defaults (runs stored before them had none)."""
        return {**self.frames_json(), **({"flows": self.flows} if self.flows != 1 else {}),
                **({"runs_s": self.runs_s} if self.runs_s is not None else {}),
                **({"foreground": self.foreground} if self.foreground != Traffic.foreground else {})}

    @classmethod
    def from_json(cls, d: dict) -> "Traffic":
        return cls(d.get("ext_headers"), d.get("icmp_echo"), d.get("flows", 1), d.get("ext_headers_scope", "all"),
                   d.get("runs_s"), d.get("ports", "fixed"), d.get("preliminary_connections", cls.preliminary_connections),
                   d.get("preliminary_rate_fps", cls.preliminary_rate_fps), d.get("foreground", cls.foreground),
                   d.get("addresses", 1))

    def describe(self) -> str:
        return "".join(f" +{x}" for x in (self.ext_headers, self.icmp_echo and f"echo-{self.icmp_echo}") if x) + \
            (" on flow 2" if self.ext_headers_scope != "all" else "") + (f" ×{self.flows} flows" if self.flows != 1 else "") + \
            (f" in {self.runs_s:g}-s runs" if self.runs_s is not None else "") + \
            (f" foreground {self.foreground}" if self.foreground != Traffic.foreground else "") + \
            (f" ×{self.addresses} addresses" if self.addresses != 1 else "")

    def on_flow2(self) -> dict[int, str]:
        """What the second flow of each IP version carries that the first
        does not (``ext_headers_scope = "flow2"``): ``{6: "+hbh"}``; empty otherwise."""
        return {6: f"+{self.ext_headers}"} if self.ext_headers_scope == "flow2" and self.ext_headers else {}


#: Flows a family's frames may be sent in: one, or two identical ones (the second an A/A control of the first).
FLOWS = (1, 2)
#: Which frames a scenario applies to: the DUT's rules (``[dut] scope``, lab/model/dut.py) and a test's
#: extension headers (``ext_headers_scope``). With ``flow2`` only a family's second flow meets it and the first, in the
#: same trials, is its control: a scenario paired inside the trial (docs/report.md, "Scenarios on a flow").
SCOPES = {"all": "every test frame", "flow2": "the second flow of each family only (the first is its control)"}
#: The UDP source port of each flow's frames with fixed ports (``ports = "fixed"``). Flow 1 keeps the engine's
#: default (engine/src/spec/types.rs ``DEFAULT_SRC_PORT``, RFC 2544 App. C.2.6.4), so one-flow specs are unchanged.
FLOW_SRC_PORT = {1: 0xC020, 2: 0xC021}
#: What the test frames' UDP ports are (``ports``): RFC 4814 §4.5's pseudorandom ports, or fixed ones.
PORTS = {
    "auto": "RFC 4814 pseudorandom ports (through a DUT that keeps state, NAT44 or stateful NAT64, each stream "
            "walks preliminary_connections of them, opened by RFC 9693's preliminary phase before every trial)",
    "rfc4814": "pseudorandom ports (RFC 4814 §4.5): sources 1024-65535 (two flows: 1024-49184 and 49185-65534), "
               "destinations 1-49151, each value once a cycle in a seeded permutation",
    "fixed": "one 5-tuple a stream: source port 49184 (49185 for flow 2), destination port 7",
}
#: RFC 4814 §4.5: source ports from the dynamic and registered range, destinations from the well-known and registered.
RFC4814_SRC = (1024, 65535)
RFC4814_DST = (1, 49151)
#: The source ports of flow 2 in either mode: what a DUT scenario scoped to flow 2 matches (``udp sport``, an ``ip
#: rule``'s ``sport``). With two flows, RFC 4814's source range is split here: flow 1 walks 1024-49184 (its fixed
#: port, 49184, is in it), flow 2 49185-65534. Port 65535 is left out: Linux's routing rules refuse a range that
#: holds it ("Invalid sport range", fib_rule_port_range_valid), and a scoped tunnel routes flow 2 by such a rule.
FLOW2_SRC_PORTS = (FLOW_SRC_PORT[2], RFC4814_SRC[1] - 1)


def src_ports(flow: int, flows: int) -> tuple[int, int]:
    """The source ports flow ``flow`` of ``flows`` walks with RFC 4814 ports."""
    if flows == 1:
        return RFC4814_SRC
    return (RFC4814_SRC[0], FLOW2_SRC_PORTS[0] - 1) if flow == 1 else FLOW2_SRC_PORTS


def flow_weights(foreground: str) -> tuple[int, int]:
    """Flow 1's and flow 2's weights among a family's frames for
    ``foreground`` ``"n/m"`` (0 < n < m ≤ 1000): (m - n, n)."""
    m_ = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", foreground) if isinstance(foreground, str) else None
    if not m_ or not 0 < int(m_[1]) < int(m_[2]) <= 1000:
        raise UsageError(f"{foreground!r} is not n/m with 0 < n < m <= 1000 (n of every m frames of a family "
                         "are flow 2's)", "foreground")
    n, m = int(m_[1]), int(m_[2])
    return m - n, n


def ports_used(asked: str) -> str:
    """The ports a trial sends (``rfc4814`` or ``fixed``) when ``asked`` (:data:`PORTS`): RFC 4814's unless
    fixed ones are asked. Through a DUT that keeps state RFC 4814's ports would open a connection with every
    new 5-tuple and measure its connection set-up, not its forwarding: there each stream walks
    :func:`connection_ports`' ports, every one of their connections opened by RFC 9693's preliminary phase
    before the trial (trial/preliminary.py)."""
    return "fixed" if asked == "fixed" else "rfc4814"


#: The preliminary phase's bounds: connections a stream walks, and its rate [frames/s].
PRELIMINARY_CONNECTIONS = (1, 4_000_000)
#: ``addresses``: 1 (the testers' own) up to the routed ranges' size (lab/model/topology.SOURCES, a /17).
ADDRESSES = (1, 32_768)
PRELIMINARY_RATE_FPS = (1.0, 10_000_000.0)


def connection_ports(connections: int, src_values: int) -> tuple[int, int]:
    """(S, D): how many source and destination ports (from the first of
    each range) a stream walks so that it holds S·D ≥ ``connections``
    4-tuples, every one of them in any S·D frames in a row: S and D are
    coprime, and frame k carries the k-th value of each field's cycle, so
    the first S·D frames carry every pair (k mod S, k mod D) once (the
    Chinese remainder theorem), whatever order each field is walked in.
    Both fields vary (RFC 4814 §4.5), about √N values each, S at most
    ``src_values`` (the stream's flow's source range)."""
    dst_values = RFC4814_DST[1] - RFC4814_DST[0] + 1
    if not 1 <= connections <= src_values * (dst_values - 1):
        raise UsageError(f"{connections:,} connections is outside 1..{src_values * (dst_values - 1):,} "
                         f"({src_values:,} source ports)", "preliminary_connections")
    s = min(src_values, math.isqrt(connections - 1) + 1)
    d = -(-connections // s)
    while math.gcd(s, d) != 1:
        d += 1
    return s, d


def port_match(ports: tuple[int, int]) -> str:
    """A port range as nftables and ``ip rule`` write it (``49185-65534``)."""
    return f"{ports[0]}-{ports[1]}"
#: Bounds of a run's length [s] (``Traffic.runs_s``): the DUT's CPU is sampled every 20 ms (lab/machine/cpu_window.py), and a
#: run must hold whole samples; a run longer than a few seconds no longer cancels the lab's slow changes of state.
RUNS_S = (0.05, 5.0)


def run_shares(shares: list[int]) -> list[int]:
    """Each stream's share of a schedule in runs, in share units: the shares
    reduced by their greatest common divisor, as the engine reduces them
    (engine/src/mix.rs ``Schedule::runs``): a stream's run lasts this many
    ``runs_s``, and a round of runs their sum."""
    g = math.gcd(*shares)
    return [s // g for s in shares]


def check_runs_fit(runs_s: float | None, mix: Mix, flows: int, duration_s: float, foreground: str = "1/2") -> None:
    """A trial in runs holds at least two rounds of them (every flow of every
    family a run each, :func:`run_shares`; two flows weighed by
    ``foreground``, :func:`flow_weights`), so each family is read in more
    than one stretch of the trial."""
    if runs_s is None:
        return
    weights = flow_weights(foreground) if flows == 2 else (1,) * flows
    units = sum(run_shares([share * w for w in weights for _, share in mix.versions]))
    if 2 * runs_s * units > duration_s:
        raise UsageError(f"{duration_s:g}-s trials hold fewer than two rounds of {runs_s:g}-s runs "
                         f"({units} a round at {mix})", "runs_s")


def check_scope(scope: str, field: str = "scope") -> None:
    """``scope`` is one of :data:`SCOPES`; errors name ``field``."""
    if scope not in SCOPES:
        raise UsageError(f"{scope!r} is not one of {', '.join(SCOPES)}", field)


def flow_name(stream: str, flow: int) -> str:
    """The name of ``stream``'s ``flow``-th flow (1: the stream's own name)."""
    return stream if flow == 1 else f"{stream}-flow{flow}"


def flow_of(name: str) -> int:
    """Which flow a stream of that name carries (:func:`flow_name`)."""
    head, _, n = name.rpartition("-flow")
    return int(n) if head and n.isdigit() else 1


#: A trial's field names → a campaign test's (``mixes[j]`` and ``frame_sizes[k]`` take their index there).
TEST_FIELDS = {"mix": "mixes", "frame_size": "frame_sizes", "bidirectional": "directions", "mesh": "kind"}


def check_frame_size(mix: Mix, frame_size: int) -> None:
    """Frames of ``frame_size`` bytes hold every family of ``mix`` and the signature."""
    if not mix.smallest_frame <= frame_size <= MAX_FRAME:
        fams = " and ".join(f"IPv{v}" for v, _ in mix.versions)
        raise UsageError(f"{frame_size} bytes is outside {mix.smallest_frame}..{MAX_FRAME} for {fams} "
                         f"(IPv6/UDP with the signature needs {MIN_FRAME[6]} bytes, IPv4 {MIN_FRAME[4]})", "frame_size")


def check(traffic: Traffic, mix: Mix, frame_size: int, bidirectional: bool, mesh: bool = False) -> None:
    """The frames' kind fits the mix, the size and the directions: echo
    traffic is two-way already and sent plain; extension headers need IPv6
    frames large enough for them; a mesh pattern sets its own directions."""
    check_frame_size(mix, frame_size)
    if traffic.flows not in FLOWS:
        raise UsageError(f"{traffic.flows!r} is not one of {', '.join(map(str, FLOWS))} flows a family", "flows")
    if traffic.flows != 1 and (mesh or traffic.icmp_echo):
        raise UsageError("a family in two flows is for UDP test frames from t1 (not a mesh, not ICMP echo)", "flows")
    check_scope(traffic.ext_headers_scope, "ext_headers_scope")
    if traffic.ports not in PORTS:
        raise UsageError(f"{traffic.ports!r} is not one of {', '.join(PORTS)}", "ports")
    flow_weights(traffic.foreground)
    if traffic.foreground != Traffic.foreground and traffic.flows != 2:
        raise UsageError("splits a family between its two flows: needs flows = 2", "foreground")
    for name, (lo, hi) in (("preliminary_connections", PRELIMINARY_CONNECTIONS), ("preliminary_rate_fps", PRELIMINARY_RATE_FPS)):
        value = getattr(traffic, name)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not lo <= value <= hi \
                or (name == "preliminary_connections" and not isinstance(value, int)):
            raise UsageError(f"{value!r} is outside {lo:,.0f}..{hi:,.0f}" + (" (a whole number)" if name.endswith("connections") else " frames/s"), name)
    if isinstance(traffic.addresses, bool) or not isinstance(traffic.addresses, int) \
            or not ADDRESSES[0] <= traffic.addresses <= ADDRESSES[1]:
        raise UsageError(f"{traffic.addresses!r} is outside {ADDRESSES[0]}..{ADDRESSES[1]:,} (a whole number)",
                         "addresses")
    if traffic.addresses != 1 and (mesh or traffic.icmp_echo):
        raise UsageError("many addresses are for UDP test frames between t1 and t2 (not a mesh, not ICMP echo)",
                         "addresses")
    if traffic.ext_headers_scope != "all" and not (traffic.ext_headers and traffic.flows == 2):
        raise UsageError("puts the extension headers on the second flow only: needs ext_headers and flows = 2",
                         "ext_headers_scope")
    if traffic.runs_s is not None:
        if not RUNS_S[0] <= traffic.runs_s <= RUNS_S[1]:
            raise UsageError(f"{traffic.runs_s:g} s is outside {RUNS_S[0]:g}..{RUNS_S[1]:g} s", "runs_s")
        if mesh or bidirectional or traffic.icmp_echo:
            raise UsageError("runs are read on one sending port: UDP test frames from t1, one way (not a mesh, not "
                             "bidirectional, not ICMP echo)", "runs_s")
    if mesh and (bidirectional or traffic.icmp_echo or traffic.ext_headers):
        raise UsageError("the pattern sets the directions; not with bidirectional traffic, ICMP echo or "
                         "extension headers", "mesh")
    if traffic.icmp_echo is not None:
        if traffic.icmp_echo not in ICMP_ECHO_TARGETS:
            raise UsageError(f"{traffic.icmp_echo!r} is not one of {', '.join(ICMP_ECHO_TARGETS)}", "icmp_echo")
        if bidirectional:
            raise UsageError("echo traffic is already two-way (requests out, replies back); send it one way",
                             "icmp_echo")
        if traffic.ext_headers:
            raise UsageError("not with extension headers", "icmp_echo")
    if traffic.ext_headers is not None:
        why = ext_headers.problem(ext_headers.check(traffic.ext_headers), mix, frame_size, MIN_FRAME[6])
        if why:
            raise UsageError(why, "ext_headers")
