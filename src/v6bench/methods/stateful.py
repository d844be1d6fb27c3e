"""RFC 9693's metrics of a DUT that keeps state (stateful NATxy gateways:
NAT44, stateful NAT64; a connection-tracking firewall alike), over the
:class:`~v6bench.core.tester.ConnectionTester` protocol.

RFC 9693 applies RFC 4814's pseudorandom ports to such a DUT in two
phases: a preliminary phase opens connections, each frame of a 4-tuple
not seen before; then frames go through connections that exist. Its new
metrics are built from those phases, each trial starting from an empty
table:

- **connection-tracking table capacity**: the most connections the DUT
  holds: the largest N such that, after N are opened at a rate it keeps
  up with, a frame from the responder's side to each of them passes;
- **maximum connection establishment rate**: the highest rate at which
  the DUT opens every one of N connections (N within its capacity),
  checked the same way;
- **connection tear-down rate**: connections deleted per second, from
  the time to delete N connections less the time to delete none.

Each search is a bisection to a relative resolution, as RFC 2544's
throughput (``methods/binary_search.py``); a trial the tester could not
keep is not the DUT's: that value is out of reach, and the result a
lower bound (``tester_limited``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..core.params import check
from ..core.tester import ConnectionTester, Measurement
from .retry import RETRIES, spoiled

#: The metrics a ``connections`` test measures, in the order it measures them (RFC 9693 §4.1-4.3).
METRICS = ("capacity", "establishment_rate", "tear_down_rate")


@dataclass(frozen=True)
class Params:
    """The searches' bounds: connections ``1..search_max_connections``; rates
    ``min_rate_fps..max_rate_fps`` [new connections/s]; ``open_rate_fps``,
    the rate the capacity search opens connections at (below the DUT's
    establishment rate); ``validate_rate_fps``, the rate of the frames from
    the responder's side; ``resolution``, the bisection's relative step;
    ``connections``, N for the establishment and tear-down rates;
    ``metrics``, which of :data:`METRICS` a ``connections`` test measures.

    The capacity search's upper end is a trial's size: its first trial
    opens ``search_max_connections`` at ``open_rate_fps`` (100,000 at 10,000/s:
    10 s). A DUT that holds them all has a capacity of at least that
    (``reached_max``, a lower bound): raise it for a larger table."""

    search_max_connections: int = 100_000
    connections: int = 10_000
    min_rate_fps: float = 100.0
    max_rate_fps: float = 2_000_000.0
    open_rate_fps: float = 10_000.0
    validate_rate_fps: float = 10_000.0
    resolution: float = 0.005
    metrics: tuple[str, ...] = METRICS

    def __post_init__(self) -> None:
        check(bool(self.metrics) and all(m in METRICS for m in self.metrics)
              and len(set(self.metrics)) == len(self.metrics), "metrics",
              f"{', '.join(self.metrics) or 'none'}: give one or more of {', '.join(METRICS)}, each once")
        check(1 <= self.connections <= self.search_max_connections, "connections",
              f"{self.connections} is outside 1..{self.search_max_connections} (search_max_connections)")
        check(0 < self.min_rate_fps < self.max_rate_fps, "min_rate_fps", "needs 0 < min_rate_fps < max_rate_fps")
        check(self.open_rate_fps > 0 and self.validate_rate_fps > 0, "open_rate_fps", "rates are positive")
        check(0 < self.resolution < 0.5, "resolution", f"{self.resolution} is outside (0, 0.5)")


@dataclass(frozen=True)
class Found:
    """A search's outcome: ``value`` (connections, or connections/s), the
    lowest failing value (None if none failed), whether the tester limited
    it (then ``value`` is a lower bound), and the trials, each as
    (value tried, preliminary phase, validation)."""

    value: float
    failed: float | None
    tester_limited: bool
    trials: tuple[tuple[float, Measurement, Measurement], ...]


def _holds(t: ConnectionTester, connections: int, open_fps: float, validate_fps: float) -> tuple[bool | None, Measurement, Measurement]:
    """Opens ``connections`` at ``open_fps`` from an empty table, then
    validates them: True if every one passed, None if the tester limited
    either phase. A pair of phases the tester spoiled (a stall: a repeat
    could do better, :func:`.retry.spoiled`) is run again from an empty
    table, at most :data:`.retry.RETRIES` more times."""
    for _ in range(RETRIES + 1):
        t.clear()
        opened = t.open(connections, open_fps)
        back = t.validate(connections, validate_fps)
        if not (spoiled(opened) or spoiled(back)):
            break
    if opened.tester_limited or back.tester_limited:
        return None, opened, back
    return back.rx_frames >= connections, opened, back


def _bisect(lo: float, hi: float, passes, resolution: float, integer: bool) -> Found:
    """The largest value in ``[lo, hi]`` for which ``passes`` holds, to
    ``resolution`` of the value (``passes`` returns (verdict, opened,
    validated)). A value the tester could not keep (verdict None) is out of
    reach, as in the throughput search: the result is then a lower bound."""
    trials = []
    good, bad, limited = 0.0, None, None

    def floor() -> float:
        return max(good, lo)

    def top() -> float:
        return min(x for x in (bad, limited) if x is not None)

    verdict, opened, back = passes(hi)
    trials.append((hi, opened, back))
    if verdict:
        return Found(hi, None, False, tuple(trials))
    if verdict is None:
        limited = hi
    else:
        bad = hi
    while top() - floor() > resolution * top():
        mid = (floor() + top()) / 2
        if integer:
            mid = float(int(mid))
            if mid <= good or mid >= top():
                break
        verdict, opened, back = passes(mid)
        trials.append((mid, opened, back))
        if verdict is None:
            limited = mid
        elif verdict:
            good = mid
        else:
            bad = mid
    return Found(good, bad, limited is not None and (bad is None or limited < bad), tuple(trials))


def table_capacity(t: ConnectionTester, p: Params) -> Found:
    """The connection-tracking table's capacity [connections]: the largest N
    whose connections all hold after they were opened at ``open_rate_fps``."""
    return _bisect(1, p.search_max_connections, lambda n: _holds(t, int(n), p.open_rate_fps, p.validate_rate_fps),
                   p.resolution, integer=True)


def establishment_rate(t: ConnectionTester, p: Params) -> Found:
    """The maximum connection establishment rate [connections/s]: the
    highest rate at which all ``connections`` are opened and hold."""
    return _bisect(p.min_rate_fps, p.max_rate_fps,
                   lambda r: _holds(t, p.connections, r, p.validate_rate_fps), p.resolution, integer=False)


def tear_down_rate(t: ConnectionTester, p: Params, repeats: int = 3) -> dict:
    """The connection tear-down rate [connections/s]: ``connections``
    deleted over the time their deletion took beyond deleting an empty
    table's (the fixed cost of the command), medians of ``repeats``."""
    full, empty = [], []
    for _ in range(repeats):
        t.clear()
        opened = t.open(p.connections, p.open_rate_fps)
        held = t.validate(p.connections, p.validate_rate_fps).rx_frames
        full.append((t.tear_down(), held, opened.tester_limited))
        t.clear()
        empty.append(t.tear_down())
    took = sorted(x for x, _, _ in full)[len(full) // 2]
    base = sorted(empty)[len(empty) // 2]
    held = min(h for _, h, _ in full)
    ok = took > base and not any(lim for _, _, lim in full)
    return {"connections": held, "tear_down_s": took, "empty_table_s": base,
            "rate_per_s": held / (took - base) if ok else None,
            "why_none": None if ok else "the tester limited the preliminary phase" if any(lim for _, _, lim in full)
            else "deleting the connections took no longer than deleting none"}


def _search(found: Found, unit: str, top: float) -> dict:
    """A search's outcome as a test result stores it: ``value`` [``unit``],
    whether it is a lower bound (the tester limited it, or every trial up
    to the search's top passed: ``reached_max``) and the trials tried."""
    reached = found.failed is None and not found.tester_limited and found.value >= top
    return {"value": found.value, "unit": unit, "failed": found.failed, "tester_limited": found.tester_limited,
            "reached_max": reached, "is_lower_bound": found.tester_limited or reached,
            "trials": [{"tried": x, "opened_rx": o.rx_frames, "opened_tx": o.tx_frames, "held": b.rx_frames,
                        "tester_limited": o.tester_limited or b.tester_limited} for x, o, b in found.trials]}


def run(t: ConnectionTester, p: Params, line_fps: float = float("inf")) -> dict:
    """A ``connections`` test: the metrics ``p.metrics`` asks, each from
    an empty table, in :data:`METRICS`' order. Capacity and establishment
    rate are searches (:func:`_search`'s record each); the tear-down rate
    is :func:`tear_down_rate`'s. No rate is above ``line_fps``, the path's
    line rate [frames/s] (RFC 2544 §26.1): the establishment rate's search
    tops out there (``max_rate_fps`` lowered to it, recorded as
    ``max_rate_fps`` in the result)."""
    for name in ("open_rate_fps", "validate_rate_fps", "min_rate_fps"):
        check(getattr(p, name) < line_fps, name, f"{getattr(p, name):,.0f} frames/s is not below the line rate "
              f"({line_fps:,.0f} frames/s)")
    p = replace(p, max_rate_fps=min(p.max_rate_fps, line_fps))
    out: dict = {"metrics": list(p.metrics), "max_rate_fps": p.max_rate_fps}
    if "capacity" in p.metrics:
        out["capacity"] = _search(table_capacity(t, p), "connections", p.search_max_connections)
    if "establishment_rate" in p.metrics:
        out["establishment_rate"] = _search(establishment_rate(t, p), "connections/s", p.max_rate_fps)
    if "tear_down_rate" in p.metrics:
        out["tear_down_rate"] = tear_down_rate(t, p)
    return out
