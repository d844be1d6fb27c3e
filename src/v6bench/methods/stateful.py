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
throughput (``methods/binary_search.py``); a step passes only when every
frame of both phases arrived; a trial the tester could not keep is not
the DUT's: that value is out of reach, and the result a lower bound
(``tester_limited``). A rate over more connections than the capacity the
same test found is refused with the reason (:func:`over_capacity`), and a
rate search in which nothing passed has no value: never "0/s". The DUT's
idle-connection timeout is set for the test and recorded, and a test
whose connections would wait longer for their validation frame is
refused (:func:`longest_wait_s`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..core.params import check
from ..core.tester import IDLE_TIMEOUT_S, ConnectionTester, Measurement
from .retry import RETRIES, spoiled

#: The metrics a ``connections`` test measures, in the order it measures them (RFC 9693 §4.1-4.3).
METRICS = ("capacity", "establishment_rate", "tear_down_rate")
#: How the capacity is searched (:attr:`Params.capacity_search`).
CAPACITY_SEARCHES = ("bisection", "rfc9693")
#: RFC 9693's capacity search: a size whose establishment rate falls below this share of the last
#: safe size's is beyond the table, in the doubling phase (beta) and in the final bisection (gamma),
#: as its authors' scripts set them.
BETA, GAMMA = 0.2, 0.4


@dataclass(frozen=True)
class Params:
    """The searches' bounds: connections ``1..search_max_connections``; rates
    ``min_rate_fps..max_rate_fps`` [new connections/s]; ``open_rate_fps``,
    the rate the capacity search opens connections at (below the DUT's
    establishment rate); ``validate_rate_fps``, the rate of the frames from
    the responder's side; ``resolution``, the bisection's relative step;
    ``connections``, N for the establishment and tear-down rates;
    ``metrics``, which of :data:`METRICS` a ``connections`` test measures;
    ``connection_timeout_s``, how long the DUT is set to keep an idle
    connection for the test (:func:`run` refuses a test whose connections
    would wait longer for their validation frame); ``capacity_search``:
    ``bisection`` (connections opened at ``open_rate_fps``) or ``rfc9693``
    (:func:`table_capacity_rfc9693`, from ``capacity_start`` connections).

    The capacity search's upper end is a trial's size: its first trial
    opens ``search_max_connections`` at ``open_rate_fps`` (100,000 at 10,000/s:
    10 s). A DUT that holds them all has a capacity of at least that
    (``reached_max``, a lower bound): raise it for a larger table."""

    search_max_connections: int = 100_000
    connections: int = 10_000
    capacity_search: str = "bisection"
    capacity_start: int = 1_000
    min_rate_fps: float = 100.0
    max_rate_fps: float = 2_000_000.0
    open_rate_fps: float = 10_000.0
    validate_rate_fps: float = 10_000.0
    resolution: float = 0.005
    metrics: tuple[str, ...] = METRICS
    connection_timeout_s: float = IDLE_TIMEOUT_S

    def __post_init__(self) -> None:
        check(bool(self.metrics) and all(m in METRICS for m in self.metrics)
              and len(set(self.metrics)) == len(self.metrics), "metrics",
              f"{', '.join(self.metrics) or 'none'}: give one or more of {', '.join(METRICS)}, each once")
        check(1 <= self.connections <= self.search_max_connections, "connections",
              f"{self.connections} is outside 1..{self.search_max_connections} (search_max_connections)")
        check(0 < self.min_rate_fps < self.max_rate_fps, "min_rate_fps", "needs 0 < min_rate_fps < max_rate_fps")
        check(self.open_rate_fps > 0 and self.validate_rate_fps > 0, "open_rate_fps", "rates are positive")
        check(0 < self.resolution < 0.5, "resolution", f"{self.resolution} is outside (0, 0.5)")
        check(self.connection_timeout_s >= 1, "connection_timeout_s", f"{self.connection_timeout_s} s: give 1 s or more")
        check(self.capacity_search in CAPACITY_SEARCHES, "capacity_search",
              f"{self.capacity_search!r}: give one of {', '.join(CAPACITY_SEARCHES)}")
        check(1 <= self.capacity_start <= self.search_max_connections, "capacity_start",
              f"{self.capacity_start} is outside 1..{self.search_max_connections} (search_max_connections)")


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


def _holds(t: ConnectionTester, connections: int, open_fps: float, p: Params) -> tuple[bool | None, Measurement, Measurement]:
    """Opens ``connections`` at ``open_fps`` from an empty table, then
    validates them: True if every frame of both phases arrived (every
    preliminary frame through the DUT, and every validation frame back
    through a connection it holds), None if the tester limited either
    phase. A pair of phases the tester spoiled (a stall: a repeat
    could do better, :func:`.retry.spoiled`) is run again from an empty
    table, at most :data:`.retry.RETRIES` more times. Refused before it
    runs if a connection would wait for its validation frame longer than
    the DUT keeps an idle one (``p.connection_timeout_s``, :func:`_wait_s`)."""
    validate_fps = p.validate_rate_fps
    _check_wait(_wait_s(connections, open_fps, validate_fps), p.connection_timeout_s, "in force",
                f"{connections:,} connections opened at {open_fps:,.0f}/s")
    for _ in range(RETRIES + 1):
        t.clear()
        opened = t.open(connections, open_fps)
        back = t.validate(connections, validate_fps)
        if not (spoiled(opened) or spoiled(back)):
            break
    if opened.tester_limited or back.tester_limited:
        return None, opened, back
    return opened.rx_frames >= connections and back.rx_frames >= connections, opened, back


def _bisect(lo: float, hi: float, passes, resolution: float, integer: bool) -> Found:
    """The largest value in ``[lo, hi]`` for which ``passes`` holds, to
    ``resolution`` of the value (``passes`` returns (verdict, opened,
    validated)); 0 if none does. A value the tester could not keep (verdict
    None) is out of reach, as in the throughput search: the result is then
    a lower bound."""
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
    return _bisect(1, p.search_max_connections, lambda n: _holds(t, int(n), p.open_rate_fps, p),
                   p.resolution, integer=True)


def table_capacity_rfc9693(t: ConnectionTester, p: Params) -> Found:
    """The table's capacity by RFC 9693 §4.1's search, as its authors'
    scripts run it: the establishment rate R₀ at a size the table surely
    holds (``capacity_start``); then the size doubled, each new size's rate
    searched below the last safe size's, until it falls below
    :data:`BETA` of it (or the size reaches ``search_max_connections``: a
    lower bound); then a bisection of the size between the last safe size
    and the first unsafe one, a size safe while its rate stays above
    :data:`GAMMA` of the last safe size's, to ``resolution`` of the size.
    A size beyond the table fails at every rate: its preliminary frames
    beyond the table's capacity are lost. Each rate search starts at the
    last safe rate and goes no lower than the share that decides; it tries
    that share first, and a size that fails it is unsafe at once (the rate
    search assumes, as every bisection does, that a size failing a rate
    fails every higher one)."""
    trials: list = []

    def rate(n: int, top: float, floor: float) -> float:
        if floor > 0:
            verdict, opened, back = _holds(t, n, max(floor, p.min_rate_fps), p)
            trials.append((float(n), opened, back))
            if verdict is False:
                return 0.0
        found = _bisect(max(floor, p.min_rate_fps), top, lambda r: _holds(t, n, r, p), p.resolution,
                        integer=False)
        trials.extend((float(n), o, b) for _, o, b in found.trials)
        return found.value

    safe, r_safe = p.capacity_start, rate(p.capacity_start, p.max_rate_fps, 0.0)
    check(r_safe > 0, "capacity_start", f"{p.capacity_start:,} connections did not open at any rate from "
          f"{p.min_rate_fps:,.0f}/s: the table holds fewer; give a smaller capacity_start")
    unsafe = None
    while unsafe is None and safe < p.search_max_connections:
        size = min(2 * safe, p.search_max_connections)
        r = rate(size, r_safe, BETA * r_safe)
        if r < BETA * r_safe:
            unsafe = size
        else:
            safe, r_safe = size, r
    while unsafe is not None and unsafe - safe > max(1.0, p.resolution * safe):
        size = (safe + unsafe) // 2
        r = rate(size, r_safe, GAMMA * r_safe)
        if r < GAMMA * r_safe:
            unsafe = size
        else:
            safe, r_safe = size, r
    return Found(float(safe), None if unsafe is None else float(unsafe), False, tuple(trials))


def establishment_rate(t: ConnectionTester, p: Params) -> Found:
    """The maximum connection establishment rate [connections/s]: the
    highest rate at which all ``connections`` are opened and hold."""
    return _bisect(p.min_rate_fps, p.max_rate_fps,
                   lambda r: _holds(t, p.connections, r, p), p.resolution, integer=False)


#: The tear-down rate's measurements (each a table opened, validated and deleted, and an empty one deleted): their medians.
TEAR_DOWN_REPEATS = 3


def tear_down_rate(t: ConnectionTester, p: Params, repeats: int = TEAR_DOWN_REPEATS) -> dict:
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
    return _tear_down_record(held, took, base, held / (took - base) if ok else None,
                             None if ok else "the tester limited the preliminary phase" if any(lim for _, _, lim in full)
                             else "deleting the connections took no longer than deleting none")


def _tear_down_record(held: int, took_s: float | None, base_s: float | None, rate: float | None,
                      why_none: str | None) -> dict:
    """The tear-down rate as a test result stores it (``rate_per_s`` None: ``why_none``)."""
    return {"connections": held, "tear_down_s": took_s, "empty_table_s": base_s, "rate_per_s": rate,
            "why_none": why_none}


def _search(found: Found, unit: str, top: float) -> dict:
    """A search's outcome as a test result stores it: ``value`` [``unit``],
    whether it is a lower bound (the tester limited it, or every trial up
    to the search's top passed: ``reached_max``) and the trials tried."""
    reached = found.failed is None and not found.tester_limited and found.value >= top
    return {"value": found.value, "unit": unit, "failed": found.failed, "tester_limited": found.tester_limited,
            "reached_max": reached, "is_lower_bound": found.tester_limited or reached,
            "trials": [{"tried": x, "opened_rx": o.rx_frames, "opened_tx": o.tx_frames, "held": b.rx_frames,
                        "tester_limited": o.tester_limited or b.tester_limited} for x, o, b in found.trials]}


def refused(unit: str, why: str) -> dict:
    """A metric not measured, as a test result stores it: no value, and why (never a rate of 0/s)."""
    return {"value": None, "unit": unit, "failed": None, "tester_limited": False, "reached_max": False,
            "is_lower_bound": False, "trials": [], "refused": why}


def _rate(found: Found, p: Params) -> dict:
    """The establishment rate's record; a search in which no rate passed, not even ``min_rate_fps``,
    has no value: N connections may be more than the table holds."""
    if found.value == 0 and not found.tester_limited:
        return {**_search(found, "connections/s", p.max_rate_fps), "value": None,
                "refused": f"no rate passed, not even {p.min_rate_fps:,.0f}/s: {p.connections:,} connections may be "
                           f"more than the DUT's table holds (measure its capacity, or give fewer --connections)"}
    return _search(found, "connections/s", p.max_rate_fps)


def over_capacity(capacity: dict | None, connections: int) -> str | None:
    """Why a rate over ``connections`` cannot be measured: they are more than the capacity this test
    found (a found value, not a lower bound), so no rate could pass; None otherwise."""
    if capacity is None or capacity.get("value") is None or capacity.get("is_lower_bound"):
        return None
    if connections > capacity["value"]:
        return (f"{connections:,} connections are more than the {capacity['value']:,.0f} the DUT's table holds "
                f"(this test's capacity): no rate over them could pass; give --connections below it")
    return None


#: Between a connection's preliminary frame and its validation frame beyond the phases' own
#: durations: the validation trial's start (the engine's set-up) [s].
PHASE_GAP_S = 5.0


def _wait_s(connections: int, open_fps: float, validate_fps: float) -> float:
    """The longest a connection waits for its validation frame [s]: opened first and validated first
    (the opening phase's duration), or opened last and validated last (the validation phase's),
    whichever is longer, plus :data:`PHASE_GAP_S`."""
    return max(connections / open_fps, connections / validate_fps) + PHASE_GAP_S


def _check_wait(wait_s: float, timeout_s: float, which: str, who: str) -> None:
    """Refuses (the field ``connection_timeout_s``) a wait for the validation frame longer than the
    DUT's idle timeout ``timeout_s`` (``which``: in force, or asked where the DUT's is not known)."""
    check(wait_s <= timeout_s, "connection_timeout_s",
          f"{who} would wait up to {wait_s:,.0f} s for its validation frame, longer than the DUT keeps an idle one "
          f"({timeout_s:,.0f} s {which}): raise connection_timeout_s (the DUT's timeout), or open them faster or fewer "
          f"(open_rate_fps, min_rate_fps, connections, search_max_connections)")


def longest_wait_s(p: Params) -> float:
    """The longest a connection of this test's bisections waits for its validation frame [s], at the
    slowest opening rate a search tries (RFC 9693's capacity search's rates are found as it goes:
    each of its trials is checked as it comes, :func:`_holds`)."""
    sizes = {"capacity": (p.search_max_connections, p.open_rate_fps if p.capacity_search == "bisection"
                          else p.max_rate_fps),
             "establishment_rate": (p.connections, p.min_rate_fps), "tear_down_rate": (p.connections, p.open_rate_fps)}
    return max(_wait_s(n, open_fps, p.validate_rate_fps) for n, open_fps in (sizes[m] for m in p.metrics))


def _held_long_enough(t: ConnectionTester, p: Params) -> float | None:
    """Sets the DUT's idle-connection timeout for the test (``p.connection_timeout_s``) and returns the
    one in force (None: the DUT's is not known); a test whose connections would wait longer for their
    validation frame than the timeout in force, or asked for where it is not known, is refused before
    any trial (its trials would measure connections set up again, not held)."""
    in_force = t.hold(p.connection_timeout_s)
    if in_force is None:
        _check_wait(longest_wait_s(p), p.connection_timeout_s, "asked", "a connection")
    else:
        _check_wait(longest_wait_s(p), in_force, "in force", "a connection")
    return in_force


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
    in_force = _held_long_enough(t, p)
    if in_force is not None:
        p = replace(p, connection_timeout_s=in_force)  # each step is checked against the one in force
    out: dict = {"metrics": list(p.metrics), "max_rate_fps": p.max_rate_fps, "connection_timeout_s": in_force}
    if "capacity" in p.metrics:
        search = table_capacity_rfc9693 if p.capacity_search == "rfc9693" else table_capacity
        out["capacity"] = {**_search(search(t, p), "connections", p.search_max_connections),
                           "search": p.capacity_search}
    over = over_capacity(out.get("capacity"), p.connections)
    if "establishment_rate" in p.metrics:
        out["establishment_rate"] = (refused("connections/s", over) if over
                                     else _rate(establishment_rate(t, p), p))
    if "tear_down_rate" in p.metrics:
        out["tear_down_rate"] = _tear_down_record(0, None, None, None, over) if over else tear_down_rate(t, p)
    return out
