"""Scenario comparisons with the lab build as their unit.

Scenarios are separate labs: each visit of a scenario brings a lab up,
measures, and takes it down (campaign/plan.visits), and a lab's level
(its delay, its forwarding rate) is set when it comes up: the trials of
one build share it. Trials of one build are therefore not independent
replicates of their scenario; the build is. A comparison between
scenarios built apart reduces each build to one value (the mean of its
values for symmetric ones, their median for skewed ones) and compares
the builds (:func:`collapsed`), so that its interval and test count
builds, not trials: a two-stage analysis of trials nested in builds,
valid for any number of trials a build. With one build a side there is
no replicate of the lab at all, and no verdict (:func:`too_few`).
Scenarios applied to some flows of one trial (``scope = "flow2"``) are
compared inside the trial instead (report/family_pairs.flow_pairs).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..core.repetitions import MIN_REPETITIONS
from .samples import Pair


def counts(p: Pair) -> dict[str, int]:
    """How many lab builds each series' values came from."""
    return {name: len(set(p.builds.get(name, []))) for name in p.values}


def collapsed(p: Pair) -> Pair:
    """``p`` with one value per lab build and series: the mean of the
    build's values (``estimator`` "mean") or their median ("location"),
    in the order the builds first appear."""
    centre = np.mean if p.estimator == "mean" else np.median
    values: dict[str, list[float]] = {}
    for name, xs in p.values.items():
        if name not in p.builds:  # a series not measured apart: as it is
            values[name] = xs
            continue
        by_build: dict[str, list[float]] = {}
        for x, b in zip(xs, p.builds.get(name, [])):
            by_build.setdefault(b, []).append(x)
        values[name] = [float(centre(v)) for v in by_build.values()]
    return replace(p, values=values, builds={})


def too_few(p: Pair) -> str | None:
    """The verdict of a comparison with too few lab builds a side for one
    (fewer than :data:`MIN_REPETITIONS`), else None."""
    n = counts(p)
    na, nb = n.get(p.name_a, 0), n.get(p.name_b, 0)
    if not na or not nb or min(na, nb) >= MIN_REPETITIONS:
        return None
    if min(na, nb) == 1:
        return (f"one lab build a side: not enough ({na} and {nb} builds; the scenarios' trials ran in "
                f"{'one lab' if max(na, nb) == 1 else 'too few labs'}, and a verdict needs {MIN_REPETITIONS} builds a side)")
    return f"not enough lab builds ({na} and {nb}; a verdict needs {MIN_REPETITIONS} a side)"
