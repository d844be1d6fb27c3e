"""MLRsearch (RFC 9971, formerly IETF draft-ietf-bmwg-mlrsearch; the PyPI
package ``MLRsearch`` from FD.io CSIT) with a v6bench measurer: NDR and PDR in one search.

The package asks ``measure(intended_duration, intended_load)``; we run the
trial and hand back its counts. A ``tester_limited`` trial cannot speak for
the DUT: it is reported to the search as offering the load in full and
losing what did not arrive, at least more than every goal allows (so the
load counts as an upper bound for each), and remembered, so a goal whose
upper bound the tester set is reported as a lower bound, as the binary
search does. The frames that did arrive set the search's first step
(from the forwarding rate at the line rate, which the tester seldom
reaches) near the DUT's rate, not at the lowest load.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

from .binary_search import min_load_fps
from ..core.tester import Measurement, Measurer


@functools.cache
def _adapter_class() -> type:
    """The measurer the package calls, built on first use: importing
    MLRsearch takes about 0.45 s (its ``Config`` inspects the call stack
    for every property), which every command line would otherwise pay,
    whether it searches or not."""
    from MLRsearch.trial_measurement import AbstractMeasurer, MeasurementResult

    class Adapter(AbstractMeasurer):
        def __init__(self, measurer: Measurer, worst_goal: float) -> None:
            self.measurer, self.worst_goal = measurer, worst_goal
            self.trials: list[Measurement] = []
            self.limited: list[float] = []

        def measure(self, intended_duration: float, intended_load: float) -> MeasurementResult:
            m = self.measurer.measure(float(intended_duration), float(intended_load))
            self.trials.append(m)
            offered, lost = max(m.tx_frames, 1), m.lost_frames
            if m.tester_limited:
                self.limited.append(float(intended_load))
                offered = max(round(float(intended_load) * float(intended_duration)), offered)
                lost = max(offered - m.rx_frames, math.floor(offered * self.worst_goal) + 1)
            return MeasurementResult(intended_duration=intended_duration, intended_load=intended_load,
                                     offered_count=offered, loss_count=min(lost, offered))

    return Adapter


@dataclass(frozen=True)
class GoalOutcome:
    """One goal's result: ``lower_fps`` the relevant lower bound (the
    conditional throughput's load, None if even the minimum load failed),
    ``upper_fps`` the relevant upper bound (None if the maximum passed),
    ``conditional_fps`` the forwarding rate at the lower bound."""

    loss_ratio: float
    lower_fps: float | None
    upper_fps: float | None
    conditional_fps: float | None
    is_lower_bound: bool


def search(measurer: Measurer, max_fps: float, loss_ratios: tuple[float, ...], final_trial_duration_s: float,
           initial_trial_duration_s: float = 1.0, relative_width: float = 0.005, exceed_ratio: float = 0.5,
           duration_sum_s: float | None = None, min_fps: float | None = None,
           search_duration_max_s: float = 86_400.0) -> tuple[list[GoalOutcome], list[Measurement]]:
    """Searches every loss-ratio goal at once; returns one outcome per goal and the trials in order."""
    from MLRsearch import Config, MultipleLossRatioSearch, SearchGoal

    initial = min(initial_trial_duration_s, final_trial_duration_s)
    goals = [
        SearchGoal(loss_ratio=lr, exceed_ratio=exceed_ratio, relative_width=relative_width,
                   initial_trial_duration=initial, final_trial_duration=final_trial_duration_s,
                   duration_sum=duration_sum_s or final_trial_duration_s, fail_fast=False)
        for lr in loss_ratios
    ]
    config = Config()
    config.goals = goals
    config.max_load = max_fps
    config.min_load = min_fps or min(min_load_fps(max_fps, initial), max_fps / 2)
    config.search_duration_max = search_duration_max_s
    config.warmup_duration = None
    adapter = _adapter_class()(measurer, max(loss_ratios))
    results = MultipleLossRatioSearch(config=config).search(measurer=adapter, debug=lambda _msg: None)
    outcomes = []
    for goal in goals:
        r = results[goal]
        lower = float(r.relevant_lower_bound) if r.relevant_lower_bound is not None else None
        upper = float(r.relevant_upper_bound) if r.relevant_upper_bound is not None else None
        cond = r.conditional_throughput
        capped = bool(adapter.limited) and min(adapter.limited) <= (upper if upper is not None else float("inf")) * (1 + 1e-9)
        outcomes.append(GoalOutcome(goal.loss_ratio, lower, upper, float(cond) if cond is not None else None, capped))
    return outcomes, adapter.trials
