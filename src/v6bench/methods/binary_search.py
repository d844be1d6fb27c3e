"""RFC 2544 §26.1 throughput by binary search: the highest load at which a
trial loses no more than a loss-ratio goal (0 = NDR, RFC 1242 §3.17; a
partial drop rate, PDR, otherwise), to a relative resolution.

A ``tester_limited`` trial cannot say whether the DUT would pass, so the
search treats that load as out of reach: the result is then a lower bound
("at least X; the tester could not offer more") and says so.

With ``start_fps`` (what a neighbouring point found: the next frame size,
the same mix), the first trial is at that load (at most the maximum) and
the search brackets the answer from there, a step of
:data:`FIRST_STEP_RESOLUTIONS` resolutions doubling after each trial on
the same side (up to the maximum, down to the lowest load), then bisects.
On a DUT whose loss grows with the load the result is the same to the
resolution; what changes is the trials it takes: fewer when the
neighbour was close, a few more when it was far
(tests/unit/test_binary_search.py).

With ``confirm_losses`` = n, a load whose trial lost more than the goal
is tried up to n times more, and fails only if every one of them does
(RFC 2544 §26.1 lets one trial decide, n = 0; RFC 9971's goal exceed
ratio is the standard's form of the idea). A loss the host caused (a
vCPU taken away for milliseconds) then no longer sets the NDR far below
the router's capacity, while a load the DUT cannot carry keeps failing;
the NDR is still a load at which a whole trial lost nothing.

The NDR's and the PDR's searches share their trials (:class:`Memo`), and
each goal's result is read over all of them (:meth:`Memo.relevant`), as
MLRsearch (RFC 9971) counts every trial for every goal: the highest load
that passed below the lowest that failed. On a router whose capacity
drifts, the PDR's search can fail a load below the NDR the NDR's search
found (gamess-forwarding's TCG router, run 2: 9 of 30 searches); read
over both, that failure lowers the NDR too (RFC 9971 takes the lower
bound of such an inversion), so the NDR never exceeds the PDR, and no
trial is added.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.tester import Measurement, Measurer


@dataclass(frozen=True)
class SearchResult:
    """``throughput_fps``: highest passing load [frames/s per direction], 0 if
    none passed; ``failed_fps``: lowest load that lost too much (None if none
    did); ``tester_limited_fps``: lowest load the tester could not offer
    (None if none); ``trials`` in the order run; ``best`` the passing trial
    at ``throughput_fps``."""

    throughput_fps: float
    failed_fps: float | None
    tester_limited_fps: float | None
    trials: tuple[Measurement, ...]
    best: Measurement | None

    @property
    def is_lower_bound(self) -> bool:
        """True when the tester, not a loss, capped the search."""
        return self.tester_limited_fps is not None and (self.failed_fps is None or self.tester_limited_fps < self.failed_fps)


class Memo:
    """A measurer that runs each (duration, load, attempt) once: a second
    search over the same trials (PDR after NDR) reuses what the first one
    measured, its confirmations of a loss (``attempt`` ≥ 1) too."""

    def __init__(self, measurer: Measurer) -> None:
        self.measurer = measurer
        self.seen: dict[tuple[float, float, int], Measurement] = {}

    def measure(self, duration_s: float, load_fps: float) -> Measurement:
        return self.measure_nth(duration_s, load_fps, 0)

    def measure_nth(self, duration_s: float, load_fps: float, attempt: int) -> Measurement:
        key = (duration_s, load_fps, attempt)
        if key not in self.seen:
            self.seen[key] = self.measurer.measure(duration_s, load_fps)
        return self.seen[key]

    def relevant(self, goal: float) -> SearchResult:
        """``goal`` read over every trial measured here: a load passes when one of its attempts, in order,
        kept to ``goal`` before a tester-limited one, is out of reach at a tester-limited attempt, and fails
        when every attempt lost more (``confirm_losses``' rule); the throughput is the highest passing load
        below the lowest failing one (RFC 9971's relevant lower bound), ``best`` its passing trial."""
        by_load: dict[float, list[tuple[int, Measurement]]] = {}
        for (_, load, attempt), m in self.seen.items():
            by_load.setdefault(load, []).append((attempt, m))
        passed: dict[float, Measurement] = {}
        failed, limited = [], []
        for load, attempts in by_load.items():
            for _, m in sorted(attempts, key=lambda a: a[0]):
                if m.tester_limited:
                    limited.append(load)
                    break
                if m.loss_ratio <= goal:
                    passed[load] = m
                    break
            else:
                failed.append(load)
        lowest_fail = min(failed, default=None)
        below = [x for x in passed if lowest_fail is None or x < lowest_fail]
        lo = max(below, default=0.0)
        return SearchResult(lo, lowest_fail, min(limited, default=None), tuple(self.seen.values()),
                            passed.get(lo))


def _decide(measurer: Measurer, duration_s: float, load_fps: float, goal: float, confirm_losses: int,
            trials: list[Measurement], max_trials: int) -> Measurement:
    """A load's deciding trial, appended to ``trials`` with the ones before it: the first that passes, or the
    last of 1 + ``confirm_losses`` that lost more than ``goal`` (a tester-limited trial is not confirmed)."""
    for attempt in range(confirm_losses + 1):
        m = _trial(measurer, duration_s, load_fps, attempt)
        trials.append(m)
        if m.tester_limited or m.loss_ratio <= goal or len(trials) >= max_trials:
            break
    return m


def _trial(measurer: Measurer, duration_s: float, load_fps: float, attempt: int) -> Measurement:
    """The ``attempt``-th trial at a load: a :class:`Memo`'s, else a new one."""
    nth = getattr(measurer, "measure_nth", None)
    return nth(duration_s, load_fps, attempt) if nth else measurer.measure(duration_s, load_fps)


#: The lowest load tried: ``max_fps`` × this, and at least
#: :data:`MIN_FRAMES_PER_TRIAL` frames per trial (methods/mlr.py uses the
#: same floor). A DUT that fails even there has a throughput of 0.
MIN_LOAD_RATIO = 1e-6
MIN_FRAMES_PER_TRIAL = 10


def min_load_fps(max_fps: float, duration_s: float) -> float:
    """The lowest load a search tries [frames/s]."""
    return max(max_fps * MIN_LOAD_RATIO, MIN_FRAMES_PER_TRIAL / duration_s)


#: A search started from a neighbour's value first tries loads this far
#: from it (× the resolution), doubling the step until a load passes and
#: one fails: a hint within four resolutions of the answer brackets it in
#: two trials.
FIRST_STEP_RESOLUTIONS = 4


def search(measurer: Measurer, duration_s: float, max_fps: float, resolution: float = 0.02,
           loss_ratio_goal: float = 0.0, max_trials: int = 20, start_fps: float | None = None,
           confirm_losses: int = 0) -> SearchResult:
    """Binary search in (0, ``max_fps``]: first ``max_fps`` itself, then halving
    the interval between the highest pass and the lowest failure until it is
    narrower than ``resolution`` × the upper end, ``max_trials`` ran, or the
    next load would be below :func:`min_load_fps`; from ``start_fps`` and
    with ``confirm_losses`` as the module says. Every trial counts towards
    ``max_trials``."""
    if not max_fps > 0 or not 0 < resolution < 1 or max_trials < 1:
        raise ValueError("max_fps > 0, 0 < resolution < 1 and max_trials ≥ 1 are required")
    if start_fps is not None and not start_fps > 0:
        raise ValueError("start_fps must be positive")
    trials: list[Measurement] = []
    lo, hi = 0.0, max_fps
    failed = limited = None
    best = None
    floor = min_load_fps(max_fps, duration_s)
    load = max_fps if start_fps is None else max(min(start_fps, max_fps), floor)
    step = FIRST_STEP_RESOLUTIONS * resolution
    bracketing = start_fps is not None and load < max_fps
    upper_seen = False  # a load failed or the tester could not offer it
    while len(trials) < max_trials:
        m = _decide(measurer, duration_s, load, loss_ratio_goal, confirm_losses, trials, max_trials)
        passed = not m.tester_limited and m.loss_ratio <= loss_ratio_goal
        if m.tester_limited:
            limited = load if limited is None else min(limited, load)
            hi, upper_seen = load, True
        elif passed:
            lo, best = load, m
            if load >= max_fps:
                break
        else:
            failed = load if failed is None else min(failed, load)
            hi, upper_seen = load, True
        if bracketing and lo > 0 and upper_seen:
            bracketing = False  # both sides found: bisect from here
        if bracketing:
            load = min(max_fps, lo * (1 + step)) if passed else max(floor, hi * (1 - step))
            step *= 2
            if not passed and load >= hi:  # the lowest load failed: nothing below to try
                break
            continue
        if hi - lo <= resolution * hi:
            break
        load = (lo + hi) / 2
        if load < floor:
            break
    return SearchResult(lo, failed, limited, tuple(trials), best)
