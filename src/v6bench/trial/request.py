"""A trial as the user asks for it, validated against the lab.

RFC 2544 §14: a bidirectional trial offers the same rate each way; the
rate is per direction.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import UsageError
from ..rates import Rate, format_link_speed, line_rate_fps, parse_rate
from ..lab import tunnel
from . import ext_headers, mesh as mesh_traffic
from .path import LabPath

#: Smallest frames (bytes incl. FCS, RFC 1242 §3.5) that hold the headers
#: and the engine's 18-byte signature: IPv4 14+20+8+18+4 = 64,
#: IPv6 14+40+8+18+4 = 84 (docs/engine-spec.md).
MIN_FRAME = {4: 64, 6: 84}
MAX_FRAME = 9216
MAX_DURATION_S = 86400.0
#: Where ``--icmp-echo`` sends its Echo Requests.
ICMP_ECHO_TARGETS = {"dut": "R1's own address on t1's link", "far": "t2, through the DUT; the engine answers"}


@dataclass(frozen=True)
class Mix:
    """IPv4/IPv6 shares in percent of frames (``90/10``); they sum to 100."""

    ipv4_pct: int
    ipv6_pct: int

    def __post_init__(self) -> None:
        if self.ipv4_pct < 0 or self.ipv6_pct < 0 or self.ipv4_pct + self.ipv6_pct != 100:
            raise UsageError(f"--mix: {self} must be two shares summing to 100")

    def __str__(self) -> str:
        return f"{self.ipv4_pct}/{self.ipv6_pct}"

    @property
    def versions(self) -> list[tuple[int, int]]:
        """(IP version, share) for each family with a share above zero."""
        return [(v, s) for v, s in ((4, self.ipv4_pct), (6, self.ipv6_pct)) if s > 0]


def parse_mix(text: str) -> Mix:
    """``IPV4/IPV6`` percentages: ``100/0``, ``90/10``, ``50/50``, ``0/100``."""
    m = re.fullmatch(r"\s*(\d{1,3})\s*/\s*(\d{1,3})\s*", text)
    if not m:
        raise UsageError(f"--mix: {text!r} is not IPV4/IPV6 percentages such as 90/10")
    a, b = int(m[1]), int(m[2])
    if a + b != 100:
        raise UsageError(f"--mix: {text!r}: the shares sum to {a + b}, not 100")
    return Mix(a, b)


@dataclass(frozen=True)
class TrialRequest:
    """One trial: ``mix``, ``frame_size`` [bytes incl. FCS], ``rate`` per
    direction, ``duration_s`` of traffic, ``bidirectional``, ``drain_s``."""

    mix: Mix
    frame_size: int
    rate: Rate
    duration_s: float
    bidirectional: bool = False
    drain_s: float = 2.0
    #: An IPv6 extension header preset (:mod:`v6bench.trial.ext_headers`) for every IPv6 frame.
    ext_headers: str | None = None
    #: ICMP echo instead of UDP test frames: Echo Requests from t1 to R1's
    #: own address (``dut``) or through the DUT to t2 (``far``), which the
    #: engine answers; the replies are counted at t1 (seed 000 Fig. 12, seed 003).
    icmp_echo: str | None = None
    #: Mesh traffic among a ``mesh:N`` lab's testers instead of t1 → t2:
    #: ``full`` or ``partial`` (:mod:`v6bench.trial.mesh`); the rate is per sending port.
    mesh: str | None = None

    def __post_init__(self) -> None:
        if self.mesh is not None:
            if self.mesh not in mesh_traffic.PATTERNS:
                raise UsageError(f"--mesh: {self.mesh!r} is not one of {', '.join(mesh_traffic.PATTERNS)}")
            if self.bidirectional or self.icmp_echo or self.ext_headers:
                raise UsageError("--mesh: the pattern sets the directions; not with --bidirectional, --icmp-echo or --ext-headers")
        if self.icmp_echo is not None:
            if self.icmp_echo not in ICMP_ECHO_TARGETS:
                raise UsageError(f"--icmp-echo: {self.icmp_echo!r} is not one of {', '.join(ICMP_ECHO_TARGETS)}")
            if self.bidirectional:
                raise UsageError("--icmp-echo: echo traffic is already two-way (requests out, replies back); drop --bidirectional")
            if self.ext_headers:
                raise UsageError("--icmp-echo: not with --ext-headers")
        if self.ext_headers is not None:
            why = ext_headers.problem(ext_headers.check(self.ext_headers), self.mix, self.frame_size, MIN_FRAME[6])
            if why:
                raise UsageError(f"--ext-headers: {why}")
        smallest = max(MIN_FRAME[v] for v, _ in self.mix.versions)
        if not smallest <= self.frame_size <= MAX_FRAME:
            fams = " and ".join(f"IPv{v}" for v, _ in self.mix.versions)
            raise UsageError(
                f"--frame-size: {self.frame_size} bytes is outside {smallest}..{MAX_FRAME} for {fams} "
                f"(IPv6/UDP with the signature needs 84 bytes, IPv4 64)"
            )
        if not 0 < self.duration_s <= MAX_DURATION_S:
            raise UsageError(f"--duration: {self.duration_s:g} s is outside (0, {MAX_DURATION_S:g}] s")
        if not 0 <= self.drain_s <= 600:
            raise UsageError(f"drain: {self.drain_s:g} s is outside 0..600 s")

    def fps(self, link_speed_bps: float) -> float:
        """The intended rate per direction [frames/s]."""
        return self.rate.fps(self.frame_size, link_speed_bps)

    def check_against(self, path: LabPath) -> float:
        """Checks the request fits the lab's path (its links' MTUs, and the
        tunnel between its routers, if any); returns the rate per
        direction [fps]. Frames larger than the path carries whole are
        fragmented (:mod:`v6bench.trial.path`)."""
        versions = {v for v, _ in self.mix.versions}
        for v in sorted(versions):
            why = path.problem(v, self.frame_size)
            if why:
                raise UsageError(f"--mix {self.mix}: {why}")
        if self.icmp_echo and any(path.source_mtu(v, self.frame_size) for v in versions):
            raise UsageError(f"--icmp-echo: {self.frame_size}-byte frames do not fit the path MTU; echo frames are sent whole")
        if self.ext_headers and 6 in versions and path.source_mtu(6, self.frame_size) is not None:
            raise UsageError(f"--ext-headers: {self.frame_size}-byte IPv6 frames exceed the path MTU "
                             f"{min(path.mtus())} and would be fragmented; frames with extension headers are sent whole")
        tunnel.check_frame(path.tunnel, self.frame_size, versions, dict(path.links).get("r1-r2", 0))
        fps = self.fps(path.link_speed_bps)
        line = path.line_fps(self.frame_size, self.mix.ipv4_pct, self.bidirectional)
        if fps > line * (1 + 1e-9):
            raise UsageError(
                f"--rate: {self.rate.text} is {fps:,.0f} frames/s, above line rate for {self.frame_size}-byte frames "
                f"on {format_link_speed(path.link_speed_bps)} links ({line:,.0f} frames/s"
                + (", fragments and tunnel included)" if line < line_rate_fps(path.link_speed_bps, self.frame_size) * (1 - 1e-9)
                   else ")")
            )
        if fps * self.duration_s < 1:
            raise UsageError(f"--rate/--duration: {fps:g} frames/s for {self.duration_s:g} s sends no frame")
        return fps


@dataclass(frozen=True)
class Traffic:
    """What a test's frames are besides mix and size: an IPv6 extension
    header preset, or ICMP echo to a target (``--ext-headers``,
    ``--icmp-echo``; campaign test keys of the same names). Stored with
    each test (``params_json``); a test reuses only a throughput measured
    with the same traffic."""

    ext_headers: str | None = None
    icmp_echo: str | None = None

    def to_json(self) -> dict:
        return {"ext_headers": self.ext_headers, "icmp_echo": self.icmp_echo}

    def describe(self) -> str:
        return "".join(f" +{x}" for x in (self.ext_headers, self.icmp_echo and f"echo-{self.icmp_echo}") if x)


def make_request(mix: str, frame_size: int, rate: str, duration_s: float, bidirectional: bool,
                 ext_headers: str | None = None, icmp_echo: str | None = None, mesh: str | None = None) -> TrialRequest:
    return TrialRequest(parse_mix(mix), int(frame_size), parse_rate(rate), float(duration_s), bidirectional,
                        ext_headers=ext_headers, icmp_echo=icmp_echo, mesh=mesh)
