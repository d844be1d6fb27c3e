"""RFC 2544 §26.1 throughput by binary search: the highest load at which a
trial loses no more than a loss-ratio goal (0 = NDR, RFC 1242 §3.17; a
partial drop rate, PDR, otherwise), to a relative resolution.

A ``tester_limited`` trial cannot say whether the DUT would pass, so the
search treats that load as out of reach: the result is then a lower bound
("at least X; the tester could not offer more") and says so.
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
    """A measurer that runs each (duration, load) once: a second search over
    the same trials (PDR after NDR) reuses what the first one measured."""

    def __init__(self, measurer: Measurer) -> None:
        self.measurer = measurer
        self.seen: dict[tuple[float, float], Measurement] = {}

    def measure(self, duration_s: float, load_fps: float) -> Measurement:
        key = (duration_s, load_fps)
        if key not in self.seen:
            self.seen[key] = self.measurer.measure(duration_s, load_fps)
        return self.seen[key]


#: The lowest load tried: ``max_fps`` × this, and at least
#: :data:`MIN_FRAMES_PER_TRIAL` frames per trial (methods/mlr.py uses the
#: same floor). A DUT that fails even there has a throughput of 0.
MIN_LOAD_RATIO = 1e-6
MIN_FRAMES_PER_TRIAL = 10


def min_load_fps(max_fps: float, duration_s: float) -> float:
    """The lowest load a search tries [frames/s]."""
    return max(max_fps * MIN_LOAD_RATIO, MIN_FRAMES_PER_TRIAL / duration_s)


def search(measurer: Measurer, duration_s: float, max_fps: float, resolution: float = 0.02,
           loss_ratio_goal: float = 0.0, max_trials: int = 20) -> SearchResult:
    """Binary search in (0, ``max_fps``]: first ``max_fps`` itself, then halving
    the interval between the highest pass and the lowest failure until it is
    narrower than ``resolution`` × the upper end, ``max_trials`` ran, or the
    next load would be below :func:`min_load_fps`."""
    if not max_fps > 0 or not 0 < resolution < 1 or max_trials < 1:
        raise ValueError("max_fps > 0, 0 < resolution < 1 and max_trials ≥ 1 are required")
    trials: list[Measurement] = []
    lo, hi = 0.0, max_fps
    failed = limited = None
    best = None
    load = max_fps
    while len(trials) < max_trials:
        m = measurer.measure(duration_s, load)
        trials.append(m)
        if m.tester_limited:
            limited = load if limited is None else min(limited, load)
            hi = load
        elif m.loss_ratio <= loss_ratio_goal:
            lo, best = load, m
            if load >= max_fps:
                break
        else:
            failed = load if failed is None else min(failed, load)
            hi = load
        if hi - lo <= resolution * hi:
            break
        load = (lo + hi) / 2
        if load < min_load_fps(max_fps, duration_s):
            break
    return SearchResult(lo, failed, limited, tuple(trials), best)
