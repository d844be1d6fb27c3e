"""The lab as a :class:`~v6bench.core.tester.Tester`: each call runs
one trial of a fixed mix, frame size and direction.

Each trial is checked against the self-test it is given
(:mod:`.tester_limits`): above 90 % of the tester's own capacity it is
``tester_limited``, and it carries the tester's latency floor.
"""

from __future__ import annotations

from typing import Any, Callable

from dataclasses import replace

from ..engine.spec import RateStep, TrialSpec
from ..lab import interface
from ..lab.protocol import Lab
from ..lab.model.site import Site
from ..core.tester import ConnectionTester, Measurement
from ..core.rates import Rate
from . import execute
from .connections import LabConnections
from .path import LabPath
from ..core.frames import Mix, Traffic
from .request import TrialRequest

class LabTester:
    """``selftest``: the latest self-test result (``capacity`` per frame size), or None;
    ``traffic``: extension headers or ICMP echo instead of plain UDP frames;
    ``settle_s``: the pause after learning (None: the engine's default)."""

    def __init__(self, site: Site, lab: Lab, mix: Mix, frame_size: int, bidirectional: bool = False,
                 drain_s: float = 2.0, selftest: dict[str, Any] | None = None, traffic: Traffic = Traffic(),
                 settle_s: float | None = None) -> None:
        self.site, self.lab, self.mix, self.frame_size = site, lab, mix, frame_size
        self.settle_s = settle_s
        self.traffic = traffic
        self.bidirectional, self.drain_s, self.selftest = bidirectional, drain_s, selftest
        # The path's highest rate: fragments and a tunnel's overhead lower it (trial/path.py).
        self.line_fps = LabPath.of(lab).line_fps(frame_size, mix.ipv4_pct, bidirectional)

    def trial(self, duration_s: float, load_fps: float, adjust: Callable[[TrialSpec], TrialSpec] | None = None,
              during: tuple[float, Callable[[], dict[str, Any]]] | None = None, mesh: str | None = None,
              with_preliminary: bool = True) -> Measurement:
        """One trial of the tester's mix, frame size and traffic at ``load_fps``
        for ``duration_s``; ``adjust`` rewrites the engine's trial spec
        before it runs (a burst, a rate step, RFC 9693's phases), ``during``
        is (at_s, action) for a reset, ``mesh`` a mesh pattern;
        ``with_preliminary``: RFC 9693's preliminary phase first where the
        trial needs it (trial/execute.trial)."""
        req = TrialRequest(self.mix, self.frame_size, Rate.of_fps(load_fps), duration_s,
                           self.bidirectional, self.drain_s, self.traffic.ext_headers, self.traffic.icmp_echo, mesh,
                           self.settle_s, self.traffic.flows, self.traffic.ext_headers_scope,
                           runs_s=self.traffic.runs_s, ports=self.traffic.ports,
                           preliminary_connections=self.traffic.preliminary_connections,
                           preliminary_rate_fps=self.traffic.preliminary_rate_fps,
                           foreground=self.traffic.foreground, addresses=self.traffic.addresses)
        r = execute.trial(self.lab, req, self.site.engine_pid_file, adjust, during, self.selftest, with_preliminary)
        extra = {}
        if r.get("action"):
            extra = {**r["action"], "reset_at_s": r.get("action_at_s")}
        learned = r.pop("learned_tuples", {})
        return Measurement(duration_s, load_fps, r["offered_fps"], r["tx_frames"], r["rx_frames"], r["tester_limited"],
                           r, tuple(r["streams"]), extra, learned)

    def measure(self, duration_s: float, load_fps: float) -> Measurement:
        return self.trial(duration_s, load_fps)

    def stamp_check(self, duration_s: float, load_fps: float) -> Measurement:
        """A trial whose senders also compare each frame's carried transmit
        stamp with the kernel's software transmit stamp (the engine's
        ``tx_stamp_check``; ``tx.tx_stamp_check`` per port in the result).
        For calibration: every frame comes back to its sender once. Only the
        ``af_packet`` backend has kernel transmit stamps: on any other
        (:mod:`.backend`; ``auto`` takes AF_XDP on veth) the trial runs
        unchecked, on the backend the other trials use, and its ports carry
        no ``tx.tx_stamp_check``."""
        def adjust(spec: TrialSpec) -> TrialSpec:
            return replace(spec, tx_stamp_check=all(p.backend == "af_packet" for p in spec.ports))
        return self.trial(duration_s, load_fps, adjust)

    def burst(self, frames: int) -> Measurement:
        def adjust(spec: TrialSpec) -> TrialSpec:
            return replace(spec, duration_s=None, frame_count=frames, after_stall="catch_up",
                           tester_limited_backlog_frames=frames + 1)  # a burst is intended here
        return self.trial(frames / self.line_fps, self.line_fps, adjust)

    def step(self, duration_s: float, load_fps: float, after_s: float, then_fps: float) -> Measurement:
        def adjust(spec: TrialSpec) -> TrialSpec:
            step = RateStep(after_s, then_fps)
            spec = spec.with_ports(lambda p: replace(p, rate_step=step) if p.sends else p)
            return replace(spec, after_stall="catch_up")  # the step's time is part of the measurement
        return self.trial(duration_s, load_fps, adjust)

    def mesh(self, pattern: str, duration_s: float, load_fps: float) -> Measurement:
        return self.trial(duration_s, load_fps, mesh=pattern)

    def reset(self, duration_s: float, load_fps: float, at_s: float, kind: str) -> Measurement:
        def action() -> dict[str, Any]:
            self.lab, timing = interface.reset(self.site, self.lab, kind)
            return timing
        def adjust(spec: TrialSpec) -> TrialSpec:
            return replace(spec, after_stall="catch_up")  # the outage is timed against the schedule
        return self.trial(duration_s, load_fps, adjust, during=(at_s, action))

    def connections(self) -> ConnectionTester:
        """RFC 9693's phases on this lab (:class:`.connections.LabConnections`):
        the mix must carry one family."""
        return LabConnections(self)
