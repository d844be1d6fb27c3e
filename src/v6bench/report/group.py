"""Grouping stored tests and trials into the series and samples views draw.

A *sample* is one value per repetition (one test, or one trial for kinds
that repeat trials inside a test); views never mix trials the tester
limited into a DUT's figures (``tester_limited``, docs/methods.md, "Tester-limited trials").
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from typing import Callable, Hashable, Iterable, TypeVar

from .data import TestData

T = TypeVar("T")


def by(items: Iterable[T], key: Callable[[T], Hashable]) -> dict:
    """Items grouped by ``key``, groups and items in first-seen order."""
    out: dict = defaultdict(list)
    for it in items:
        out[key(it)].append(it)
    return dict(out)


#: Mixes in the order the seeds tabulate them; others after, by name.
MIX_ORDER = ("100/0", "90/10", "50/50", "10/90", "0/100")


def mix_key(mix: str) -> tuple:
    return (MIX_ORDER.index(mix) if mix in MIX_ORDER else len(MIX_ORDER), mix)


def series_key(t: TestData) -> tuple:
    """What one line of a chart is: scenario (in run order), mix, traffic, direction."""
    return (t.scenario_index, t.scenario, mix_key(t.mix), t.traffic, t.direction)


def measured(t: TestData, load_fps: float | None = None) -> list[dict]:
    """The test's fixed-rate trials (``measure`` calls) the tester did not
    limit, without the trials of a throughput search it ran first to start
    from (``throughput_search_trials``, methods/registry.py); with
    ``load_fps``, only those at that load (to 1 ppm)."""
    own_from = t.result.get("throughput_search_trials", 0)
    return [x for x in t.trials if x["call"] == "measure" and not x["tester_limited"] and (not own_from or x["seq"] >= own_from)
            and (load_fps is None or abs(x["call_args"]["load_fps"] - load_fps) <= 1e-6 * load_fps)]


def mean(xs: list[float]) -> float | None:
    return statistics.fmean(xs) if xs else None


def median(xs: list[float]) -> float | None:
    return statistics.median(xs) if xs else None


def cv_pct(xs: list[float]) -> float | None:
    """Coefficient of variation [%]: sample standard deviation over the mean (two values or more)."""
    if len(xs) < 2 or not statistics.fmean(xs):
        return None
    return 100 * statistics.stdev(xs) / statistics.fmean(xs)


def families(trial: dict) -> dict[int, list[dict]]:
    """A trial's stream summaries by IP version."""
    out: dict[int, list[dict]] = defaultdict(list)
    for s in trial["streams"]:
        out[s["ip_version"]].append(s)
    return dict(out)


def family_latency_mean_ns(streams: list[dict]) -> float | None:
    """Frame-weighted mean latency of streams (one family of one trial)."""
    lat = [s["latency_ns"] for s in streams if s.get("latency_ns") and s["latency_ns"]["count"]]
    n = sum(x["count"] for x in lat)
    return sum(x["mean"] * x["count"] for x in lat) / n if n else None


def dut_cpu_pct(trial: dict) -> dict[str, float]:
    """Each router's forwarding CPU [% of one CPU] in the trial, where measured."""
    r = trial.get("result") or {}
    return {k: v for k, v in (r.get("dut_cpu") or {}).items() if v is not None}


def load_pct(t: TestData, trial: dict) -> float | None:
    """A trial's intended load in % of line rate (per direction)."""
    fps = trial["call_args"].get("load_fps")
    return 100 * fps / t.line_fps if fps is not None and t.line_fps else None
