"""The interface every method depends on: a tester that runs trials.

A method asks ``measure(duration_s, load_fps)`` (and, for the RFC 2544
§26.4–26.6 tests, a burst, a rate step or a reset) and gets the counts
back; it never knows whether a lab, a physical tester or a simulation
answered. :mod:`v6bench.methods.simulated` is a seeded simulation with a
known loss curve; :mod:`v6bench.trial.lab_tester` is the lab.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

#: The DUT resets a :class:`Tester` performs (RFC 2544 §26.6): ``soft``
#: (interfaces down and up) and ``hard`` (the router rebuilt, lab/emulated/reset.py).
RESET_KINDS = ("soft", "hard")


@dataclass(frozen=True)
class Measurement:
    """One trial's outcome.

    ``intended_load_fps`` [frames/s] is what was asked (per direction),
    ``offered_load_fps`` what the tester achieved (all directions),
    ``tx_frames``/``rx_frames`` are counts over all streams. A
    ``tester_limited`` trial says nothing about the DUT. ``streams`` are
    the per-stream summaries (``docs/trial-result.md``: ``ip_version``,
    ``latency_ns``, ``pdv_ns``, ``ipdv_ns``, ``inter_arrival_ns``,
    ``loss_window``, …); ``detail`` is the full trial result, if any;
    ``extra`` holds what a special trial measured besides the counts
    (a reset's timing); ``learned_tuples``, the 4-tuples its ``learn_tuples``
    streams arrived with, by stream name (engine/result.take_learned_tuples;
    never stored).
    """

    duration_s: float
    intended_load_fps: float
    offered_load_fps: float
    tx_frames: int
    rx_frames: int
    tester_limited: bool
    detail: dict | None = field(default=None, compare=False, repr=False)
    streams: tuple[dict, ...] = field(default=(), compare=False, repr=False)
    extra: dict = field(default_factory=dict, compare=False, repr=False)
    learned_tuples: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.tx_frames < 0 or self.rx_frames < 0:
            raise ValueError("frame counts are never negative")

    @property
    def tester_over_capacity(self) -> bool:
        """The load was beyond what the tester can offer at all (its
        self-test, ``detail``): a repeat cannot change that."""
        return bool((self.detail or {}).get("tester_over_capacity"))

    @property
    def suspect(self) -> bool:
        """The counts hold but the delays cannot be trusted (frames timed
        before they were sent, ``detail``)."""
        return bool((self.detail or {}).get("suspect_reasons"))

    @property
    def lost_frames(self) -> int:
        return max(self.tx_frames - self.rx_frames, 0)

    @property
    def loss_ratio(self) -> float:
        return self.lost_frames / self.tx_frames if self.tx_frames else 0.0

    def families(self) -> dict[int, list[dict]]:
        """The stream summaries by IP version."""
        out: dict[int, list[dict]] = {}
        for s in self.streams:
            out.setdefault(s["ip_version"], []).append(s)
        return out


class Measurer(Protocol):
    def measure(self, duration_s: float, load_fps: float) -> Measurement:
        """Runs one trial of ``duration_s`` seconds at ``load_fps`` frames/s per direction."""
        ...


class Tester(Measurer, Protocol):
    """A measurer for the whole RFC 2544 suite, bound to one mix, frame
    size and direction. ``line_fps`` is the theoretical maximum per
    direction [frames/s] (RFC 2544 §26.1)."""

    line_fps: float

    def burst(self, frames: int) -> Measurement:
        """Sends ``frames`` frames per direction back to back at line rate (RFC 9004)."""
        ...

    def step(self, duration_s: float, load_fps: float, after_s: float, then_fps: float) -> Measurement:
        """``load_fps`` for ``after_s``, then ``then_fps`` until ``duration_s`` (RFC 2544 §26.5)."""
        ...

    def mesh(self, pattern: str, duration_s: float, load_fps: float) -> Measurement:
        """Mesh traffic among the lab's tester ports (``pattern``, core/frames.py's
        MESH_PATTERNS), ``load_fps`` per sending port (RFC 2889 §5.1)."""
        ...

    def reset(self, duration_s: float, load_fps: float, at_s: float, kind: str) -> Measurement:
        """A trial during which the DUT is reset (``kind``: one of :data:`RESET_KINDS`) about
        ``at_s`` into the traffic (RFC 2544 §26.6); ``extra`` holds the
        reset's timing."""
        ...

    def connections(self) -> "ConnectionTester":
        """The same lab, mix and frame size as a :class:`ConnectionTester`
        (RFC 9693's phases: a ``connections`` test); raises
        :class:`~v6bench.core.errors.UsageError` where the tester has none."""
        ...


#: How long a DUT that keeps state is set to keep an idle connection for a test [s] (Linux's own is 30 s
#: for UDP never answered): RFC 9693's measurements and the trials after a preliminary phase.
IDLE_TIMEOUT_S = 300.0


class ConnectionTester(Protocol):
    """A tester of a DUT that keeps state (NAT44, stateful NAT64, a
    connection-tracking firewall), for RFC 9693's connection metrics: the
    initiator's side (t1, IPv6 for NAT64) opens connections, the
    responder's side (t2, IPv4) sends back through them."""

    def clear(self) -> None:
        """Empties the DUT's connection table (a command, or its timeout
        waited out): every measurement starts from an empty table."""
        ...

    def open(self, connections: int, rate_fps: float) -> Measurement:
        """RFC 9693's preliminary phase: ``connections`` frames from the
        initiator's side at ``rate_fps``, each of a 4-tuple not sent before
        (pseudorandom ports, each combination once)."""
        ...

    def validate(self, connections: int, rate_fps: float) -> Measurement:
        """One frame from the responder's side to each of the ``connections``
        opened, at ``rate_fps``: a frame passes only through a connection
        the DUT holds, so ``rx_frames`` counts the connections it holds."""
        ...

    def tear_down(self) -> float:
        """Deletes every connection the DUT holds; the time it took [s]."""
        ...

    def hold(self, timeout_s: float) -> float | None:
        """Sets how long the DUT keeps an idle connection to ``timeout_s``; the timeout in force after
        [s] (a connection not revisited within it is gone), None if not known."""
        ...


#: The transports a :class:`HostTester` streams over.
HOST_PROTOCOLS = ("tcp", "udp")
#: Largest UDP message: 65,535 − 8 (UDP) − 20 (IPv4 header); IPv6 allows
#: 20 bytes more, but one limit keeps the families comparable.
MAX_UDP_MESSAGE = 65507
MAX_TCP_MESSAGE = 1 << 20


def message_problem(protocols: tuple[str, ...], message_bytes: int) -> str | None:
    """Why ``message_bytes`` cannot be a message of every one of
    ``protocols``, or None."""
    udp = "udp" in protocols
    top = MAX_UDP_MESSAGE if udp else MAX_TCP_MESSAGE
    if not 1 <= message_bytes <= top:
        return f"{message_bytes} bytes is outside 1..{top:,}" + (" (the largest UDP datagram over IPv4)" if udp else "")
    return None


class HostTester(Protocol):
    """The tester hosts' own stacks (the host-stack tests, seed 001 and
    004): no test frames, no mix; one IP version per call."""

    def stream(self, version: int, protocol: str, message_bytes: int, duration_s: float) -> dict:
        """One iperf3 run from t1's stack to t2's; the summary of :func:`v6bench.host.iperf.summarize`."""
        ...

    def rr(self, version: int, payload_bytes: int, duration_s: float) -> dict:
        """UDP request/response t1 ↔ t2 over the lab's path and over a direct baseline link."""
        ...

    def mtu_payload(self, version: int) -> int:
        """The largest IP payload the path carries whole (MTU − IP header)."""
        ...
