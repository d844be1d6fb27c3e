"""A simulated DUT and tester with a known loss curve, seeded: every
method is tested against it without root.

The DUT forwards up to ``capacity_fps`` per direction and queues up to
``buffer_frames``; a load above capacity loses the excess (plus seeded
noise on the capacity, ±``noise``). The tester offers at most
``tester_max_fps``; above it a trial is ``tester_limited``. A burst of N
frames at line rate R fills the queue at R − capacity. After an overload
the DUT keeps losing for ``recovery_s``. A reset loses ``outage_s`` of
traffic. Latency is ``latency_ns`` plus jitter.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from ..core.errors import UsageError
from ..core.tester import ConnectionTester, Measurement


@dataclass
class SimulatedTester:
    capacity_fps: float
    line_fps: float = 1_000_000.0
    buffer_frames: int = 1000
    tester_max_fps: float = float("inf")
    noise: float = 0.0
    recovery_s: float = 0.0
    outage_s: dict = field(default_factory=lambda: {"soft": 0.2, "hard": 1.0})
    latency_ns: float = 20_000.0
    families: tuple[int, ...] = (4, 6)
    seed: int = 1
    calls: list = field(default_factory=list)
    #: The DUT's connection table, for a ``connections`` test (None: the simulated DUT keeps no state).
    stateful: "SimulatedConnections | None" = None

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)

    def _streams(self, tx: int, rx: int, lat: float, gap_ns: float, loss_window=None) -> tuple[dict, ...]:
        out = []
        n = len(self.families)
        for i, v in enumerate(self.families):
            t, r = tx // n + (1 if i < tx % n else 0), rx // n + (1 if i < rx % n else 0)
            jitter = self.rng.uniform(0, lat * 0.1)
            l = lat * (1.05 if v == 6 else 1.0) + jitter
            out.append({
                "ip_version": v, "tx_frames": t, "rx_frames": r, "lost_frames": t - r,
                "latency_ns": {"count": r, "min": l * 0.9, "mean": l, "stddev": l * 0.05, "p50": l,
                               "p99": l * 1.5, "p999": l * 2, "max": l * 3} if r else None,
                "pdv_ns": {"p50": l * 0.1, "p99": l * 0.6, "p999": l * 1.1, "max": l * 2.1} if r else None,
                "ipdv_ns": {"min": -l * 0.5, "median": 0, "max": l * 0.5} if r > 1 else None,
                "inter_arrival_ns": {"max": gap_ns} if r > 1 else None,
                "loss_window": loss_window if t > r else None,
            })
        return tuple(out)

    def _detail(self, load_fps: float) -> dict | None:
        """The simulated tester's limit is its capacity: a repeat would not help (methods/retry.py)."""
        return {"tester_over_capacity": True} if load_fps > self.tester_max_fps else None

    def measure(self, duration_s: float, load_fps: float) -> Measurement:
        self.calls.append(("measure", duration_s, load_fps))
        tx = max(1, round(load_fps * duration_s))
        cap = self.capacity_fps * (1 + self.rng.uniform(-self.noise, self.noise))
        rx = min(tx, round(cap * duration_s) + self.buffer_frames if load_fps > cap else tx)
        lat = self.latency_ns * (1 + 4 * min(load_fps / self.capacity_fps, 1) ** 8)
        return Measurement(duration_s, load_fps, min(load_fps, self.tester_max_fps), tx, rx,
                           load_fps > self.tester_max_fps, self._detail(load_fps), streams=self._streams(tx, rx, lat, 1e9 / load_fps))

    def burst(self, frames: int) -> Measurement:
        self.calls.append(("burst", frames))
        queued = frames * (1 - min(self.capacity_fps / self.line_fps, 1))
        lost = max(0, round(queued - self.buffer_frames))
        duration_s = frames / self.line_fps
        return Measurement(duration_s, self.line_fps, self.line_fps, frames, frames - lost,
                           self.line_fps > self.tester_max_fps, self._detail(self.line_fps), streams=self._streams(frames, frames - lost, self.latency_ns, 0))

    def step(self, duration_s: float, load_fps: float, after_s: float, then_fps: float) -> Measurement:
        self.calls.append(("step", duration_s, load_fps, after_s, then_fps))
        tx = round(load_fps * after_s) + round(then_fps * (duration_s - after_s))
        over = max(0.0, load_fps - self.capacity_fps) * after_s
        late = max(0.0, then_fps - self.capacity_fps * 0.5) * self.recovery_s if over else 0.0
        lost = round(over + late)
        window = {"first_due_s": self.buffer_frames / max(load_fps - self.capacity_fps, 1e-9),
                  "last_due_s": after_s + (self.recovery_s if over else 0.0)} if lost else None
        return Measurement(duration_s, tx / duration_s, tx / duration_s, tx, tx - lost, load_fps > self.tester_max_fps,
                           self._detail(load_fps), streams=self._streams(tx, tx - lost, self.latency_ns, 1e9 / then_fps, window))

    def reset(self, duration_s: float, load_fps: float, at_s: float, kind: str) -> Measurement:
        self.calls.append(("reset", duration_s, load_fps, at_s, kind))
        tx = round(load_fps * duration_s)
        outage = self.outage_s[kind]
        lost = round(outage * load_fps)
        return Measurement(duration_s, load_fps, load_fps, tx, tx - lost, load_fps > self.tester_max_fps,
                           self._detail(load_fps), streams=self._streams(tx, tx - lost, self.latency_ns, outage * 1e9 + 1e9 / load_fps),
                           extra={"reset_kind": kind, "reset_at_s": at_s, "reset_took_s": 0.01})


    def connections(self) -> ConnectionTester:
        if self.stateful is None:
            raise UsageError("this simulated DUT keeps no state: no connections to measure", "kind")
        return self.stateful


@dataclass
class SimulatedConnections:
    """A simulated DUT that keeps state (:class:`~v6bench.core.tester.ConnectionTester`),
    seeded: its table holds ``capacity`` connections; it opens at most
    ``max_new_per_s`` a second (± ``noise``, drawn each phase), the frames
    of new connections above that rate dropped evenly; deleting ``n``
    connections takes ``teardown_base_s + n / teardown_per_s``. Frames of
    the responder's side pass only through connections held."""

    capacity: int
    max_new_per_s: float
    teardown_per_s: float = 1e6
    teardown_base_s: float = 0.01
    tester_max_fps: float = float("inf")
    noise: float = 0.0
    seed: int = 1
    held: int = 0
    #: How long it keeps an idle connection [s], and whether :meth:`hold` may change it.
    timeout_s: float = 30.0
    timeout_settable: bool = True

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)

    def hold(self, timeout_s: float) -> float:
        if self.timeout_settable:
            self.timeout_s = timeout_s
        return self.timeout_s

    def clear(self) -> None:
        self.held = 0

    def open(self, connections: int, rate_fps: float) -> Measurement:
        limit = self.max_new_per_s * (1 + self.rng.uniform(-self.noise, self.noise))
        accepted = connections if rate_fps <= limit else int(connections * limit / rate_fps)
        passed = min(accepted, self.capacity - self.held)
        self.held += passed
        return Measurement(connections / rate_fps, rate_fps, min(rate_fps, self.tester_max_fps), connections, passed,
                           rate_fps > self.tester_max_fps, self._detail(rate_fps))

    def validate(self, connections: int, rate_fps: float) -> Measurement:
        return Measurement(connections / rate_fps, rate_fps, min(rate_fps, self.tester_max_fps), connections,
                           min(connections, self.held), rate_fps > self.tester_max_fps, self._detail(rate_fps))

    def _detail(self, rate_fps: float) -> dict | None:
        """Beyond the simulated tester's capacity: a repeat would not help (methods/retry.py)."""
        return {"tester_over_capacity": True} if rate_fps > self.tester_max_fps else None

    def tear_down(self) -> float:
        took = self.teardown_base_s + self.held / self.teardown_per_s
        self.held = 0
        return took * (1 + self.rng.uniform(-self.noise, self.noise) / 10)
