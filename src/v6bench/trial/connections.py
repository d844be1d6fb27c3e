"""The lab as a :class:`~v6bench.core.tester.ConnectionTester` (RFC 9693;
:mod:`v6bench.methods.stateful`): t1 opens connections through R1, t2
sends back through them.

``open(N, R)``: N frames from t1 at R frames/s, one stream of the
tester's family (IPv6 across a NAT64, IPv4 through NAT44), each of a
4-tuple not sent before: the source port walks S values from 1024 and the
destination port D values from 1, in order, with S·D ≥ N and S, D coprime,
so that frame k carries the pair (k mod S, k mod D) and the first S·D
frames are all different pairs (the Chinese remainder theorem).

The open phase's frames learn, at t2, the 4-tuples they arrived with
(the engine's ``learn_tuples``: R1's outside address and the port its
NAT chose). ``validate(N, R)``: one frame from t2 to each connection the
last ``open`` learned (up to N), at R frames/s, frame k answering the
k-th (the engine's ``walk.reply_to``: to its source address and port,
from its destination address and port; nothing is guessed): a frame passes back to
t1 (as IPv6 across the NAT64) only through a connection R1 holds.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Protocol

from ..core.errors import UsageError
from ..core import frames
from ..core.frames import RFC4814_DST, RFC4814_SRC, Mix
from ..core.tester import Measurement
from ..engine.spec import Stream, TrialSpec, Walk
from ..lab import interface
from ..lab.model import translation
from ..lab.protocol import Lab
from . import answers

#: How many source and destination ports the connections' 4-tuples take at most.
SRC_PORTS = RFC4814_SRC[1] - RFC4814_SRC[0] + 1
DST_PORTS = RFC4814_DST[1] - RFC4814_DST[0] + 1


def port_walk(connections: int) -> tuple[int, int]:
    """(S, D): the source and destination ports N connections walk
    (core/frames.connection_ports: S·D ≥ N, gcd(S, D) = 1)."""
    try:
        return frames.connection_ports(connections, SRC_PORTS)
    except UsageError as e:
        raise UsageError(e.message, "connections") from None


class Trials(Protocol):
    """What the phases need of a :class:`~.lab_tester.LabTester`: its lab,
    mix, and a trial whose engine spec they rewrite."""

    lab: Lab
    mix: Mix

    def trial(self, duration_s: float, load_fps: float, adjust: Callable[[TrialSpec], TrialSpec] | None = None, *,
              with_preliminary: bool = True) -> Measurement:
        ...


class LabConnections:
    """RFC 9693's phases on the lab, for ``tester``'s lab, one-family mix and
    frame size (its trials, self-test check and retries are the tester's)."""

    def __init__(self, tester: Trials) -> None:
        (self.version, _), *more = tester.mix.versions
        if more:
            raise UsageError("connections are opened by one family: mix 100/0 (NAT44) or 0/100 (NAT64)", "mix")
        self.tester = tester
        self.learned: str | None = None  # the last open phase's 4-tuples (base64 records)

    def clear(self) -> None:
        interface.clear_connections(self.tester.lab)

    def tear_down(self) -> float:
        return interface.clear_connections(self.tester.lab)

    def hold(self, timeout_s: float) -> float | None:
        return interface.hold_connections(self.tester.lab, timeout_s)

    def _ports(self, connections: int) -> tuple[str, str]:
        s, d = port_walk(connections)
        return f"{RFC4814_SRC[0]}-{RFC4814_SRC[0] + s - 1}", f"{RFC4814_DST[0]}-{RFC4814_DST[0] + d - 1}"

    def open(self, connections: int, rate_fps: float) -> Measurement:
        src, dst = self._ports(connections)

        def adjust(spec: TrialSpec) -> TrialSpec:
            (first,) = [s for s in spec.streams if s.tx_port == "t1"]
            stream = replace(first, name="open", src_port=None, share=1, learn_tuples=True,
                             walk=Walk(src_port=(src,), dst_port=(dst,)))
            return replace(spec, streams=(stream,), duration_s=None, frame_count=connections)
        opened = self.tester.trial(connections / rate_fps, rate_fps, adjust, with_preliminary=False)
        self.learned = opened.learned_tuples.get("open")
        return opened

    def validate(self, connections: int, rate_fps: float) -> Measurement:
        learned = answers.records(self.learned, 4) if self.learned else 0  # t1's frames arrive at t2 as IPv4
        if not learned:  # nothing arrived: no connection to answer, none held
            return Measurement(0.0, rate_fps, 0.0, 0, 0, False)
        count = min(connections, learned)

        def adjust(spec: TrialSpec) -> TrialSpec:
            (first,) = [s for s in spec.streams if s.tx_port == "t1"]
            size = first.frame_size + translation.size_change(self.version, 4)
            back = Stream("validate", "t2", "t1", 4, size, 1, walk=Walk(reply_to=self.learned),
                          rx_ip_version=self.version)
            t1 = next(p for p in spec.ports if p.name == "t1")
            ports = tuple(replace(p, tx_fps=t1.tx_fps, tx_cpu=t1.tx_cpu, tx_queues=t1.tx_queues) if p.name == "t2"
                          else replace(p, tx_fps=None, tx_cpu=None, tx_queues=None) for p in spec.ports)
            return replace(spec, ports=ports, streams=(back,), duration_s=None, frame_count=count)
        return self.tester.trial(count / rate_fps, rate_fps, adjust, with_preliminary=False)
