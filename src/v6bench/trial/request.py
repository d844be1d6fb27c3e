"""A trial as the user asks for it, validated against the lab.

RFC 2544 §14: a bidirectional trial offers the same rate each way; the
rate is per direction.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.errors import UsageError
from ..core.rates import Rate, format_link_speed, line_rate_fps, parse_rate
from ..core import frames
from ..core.frames import Mix, Traffic, parse_mix
from . import fit, settle
from .path import LabPath
from ..lab.model.dut import DutConfig
from ..lab.model.mtu import Mtus
from ..lab.model.tunnel import Tunnel

MAX_DURATION_S = 86400.0


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
    #: An IPv6 extension header preset (:mod:`v6bench.core.ext_headers`) for every IPv6 frame.
    ext_headers: str | None = None
    #: ICMP echo instead of UDP test frames: Echo Requests from t1 to R1's
    #: own address (``dut``) or through the DUT to t2 (``far``), which the
    #: engine answers; the replies are counted at t1 (seed 000 Fig. 12, seed 003).
    icmp_echo: str | None = None
    #: Mesh traffic among a ``mesh:N`` lab's testers instead of t1 → t2:
    #: ``full`` or ``partial`` (:mod:`v6bench.trial.mesh`); the rate is per sending port.
    mesh: str | None = None
    #: The pause after the learning frames before the traffic [s] (RFC 2544 §23;
    #: None: the engine's default, docs/engine-spec.md).
    settle_s: float | None = None
    #: Each family's frames in this many identical flows (core/frames.FLOWS; 2: the second an A/A control).
    flows: int = 1
    #: ``flow2``: the extension headers on each family's second flow only (core/frames.SCOPES).
    ext_headers_scope: str = "all"
    #: The streams' places in the engine's round robin: None, as listed (IPv4 before IPv6, flow 1 before
    #: flow 2); a number: the order of the families and of the flows drawn from it (trial/spec.py).
    #: :func:`v6bench.trial.execute.trial` draws one for every trial and records it.
    order_seed: int | None = None
    #: The streams in runs of this many seconds a share unit instead of frame by frame (core/frames.Traffic.runs_s).
    runs_s: float | None = None
    #: The test frames' UDP ports (core/frames.PORTS): ``auto``, ``rfc4814`` or ``fixed``.
    ports: str = "auto"
    #: RFC 9693's preliminary phase through a DUT that keeps state (core/frames.Traffic): connections a stream
    #: walks, and the phase's rate per sending port [frames/s].
    preliminary_connections: int = frames.Traffic.preliminary_connections
    preliminary_rate_fps: float = frames.Traffic.preliminary_rate_fps
    #: With two flows, n of every m frames of a family are flow 2's (core/frames.Traffic.foreground).
    foreground: str = frames.Traffic.foreground
    #: Source and destination addresses t1's frames walk (core/frames.Traffic.addresses).
    addresses: int = 1

    def __post_init__(self) -> None:
        if self.mesh is not None:
            frames.check_mesh_pattern(self.mesh)
        frames.check(self.traffic, self.mix, self.frame_size, self.bidirectional, mesh=self.mesh is not None)
        if not 0 < self.duration_s <= MAX_DURATION_S:
            raise UsageError(f"{self.duration_s:g} s is outside (0, {MAX_DURATION_S:g}] s", "duration_s")
        frames.check_runs_fit(self.runs_s, self.mix, self.flows, self.duration_s, self.foreground)
        if not 0 <= self.drain_s <= 600:
            raise UsageError(f"{self.drain_s:g} s is outside 0..600 s", "drain_s")
        if self.settle_s is not None:
            settle.check(self.settle_s, "settle_s")

    @property
    def traffic(self) -> Traffic:
        return Traffic(self.ext_headers, self.icmp_echo, self.flows, self.ext_headers_scope, self.runs_s, self.ports,
                       self.preliminary_connections, self.preliminary_rate_fps, self.foreground, self.addresses)

    def check_on_lab(self, topology: str, link_speed_bps: float, mtu: Mtus, tunnel: Tunnel | None,
                     dut: DutConfig = DutConfig()) -> float:
        """Checks the request fits a lab of ``topology`` with these links,
        MTUs, tunnel and DUT configuration (what the traffic needs of the topology, mesh
        paths, :meth:`check_against` the path from t1 to t2); returns the
        rate per direction [fps]. The command line calls it before it
        builds a lab, the trial's execution on the lab it runs on."""
        mesh = self.mesh is not None
        fit.check_on_topology(self.traffic, topology, mesh=mesh)
        fit.check_on_dut(self.traffic, dut)
        if self.mesh is not None:
            fit.check_mesh(self.mesh, self.mix, self.frame_size, topology, link_speed_bps, mtu)
        return self.check_against(LabPath.build(topology, link_speed_bps, mtu, tunnel))

    def check_against(self, path: LabPath) -> float:
        """Checks the request fits the lab's path (its links' MTUs, and the
        tunnel between its routers, if any); returns the rate per
        direction [fps]. Frames larger than the path carries whole are
        fragmented (:mod:`v6bench.trial.path`)."""
        fit.check_on_path(self.traffic, self.mix, self.frame_size, path)
        line = path.line_fps(self.frame_size, self.mix.ipv4_pct, self.bidirectional)
        fps = self.rate.fps(self.frame_size, line)  # a percentage is of the path's line rate (core/rates.py)
        if fps > line * (1 + 1e-9):
            raise UsageError(
                f"{self.rate.text} is {fps:,.0f} frames/s, above line rate for {self.frame_size}-byte frames "
                f"on {format_link_speed(path.link_speed_bps)} links ({line:,.0f} frames/s"
                + (", fragments and tunnel included)" if line < line_rate_fps(path.link_speed_bps, self.frame_size) * (1 - 1e-9)
                   else ")"), "rate")
        if fps * self.duration_s < 1:
            raise UsageError(f"{fps:g} frames/s for {self.duration_s:g} s sends no frame", "duration_s")
        return fps


def make_request(mix: str, frame_size: int, rate: str, duration_s: float, bidirectional: bool,
                 ext_headers: str | None = None, icmp_echo: str | None = None, mesh: str | None = None,
                 flows: int = 1, ext_headers_scope: str = "all", runs_s: float | None = None,
                 ports: str = "auto", preliminary_connections: int = Traffic.preliminary_connections,
                 preliminary_rate_fps: float = Traffic.preliminary_rate_fps,
                 foreground: str = Traffic.foreground, addresses: int = 1) -> TrialRequest:
    return TrialRequest(parse_mix(mix), int(frame_size), parse_rate(rate), float(duration_s), bidirectional,
                        ext_headers=ext_headers, icmp_echo=icmp_echo, mesh=mesh, flows=flows, ext_headers_scope=ext_headers_scope,
                        runs_s=runs_s, ports=ports, preliminary_connections=preliminary_connections,
                        preliminary_rate_fps=preliminary_rate_fps, foreground=foreground, addresses=addresses)
