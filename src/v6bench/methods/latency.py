"""Latency and delay variation at given loads (RFC 2544 §26.2, RFC 8219
§7.2–7.3, RFC 5481).

The families are compared paired by default (``families = "paired"``):
the mixes 100/0 and 0/100 run as one 50/50 mix, so each trial carries
both, interleaved, and the report compares each trial's IPv6 delay with
its own IPv4 delay (docs/report.md, "Paired comparisons").
``families = "separate"`` runs each family in trials of its own.

The engine timestamps every frame, a superset of RFC 2544's one tagged
frame per trial and of RFC 8219's 500. Per load and IP version, over the
repetitions that were not tester-limited:

- RFC 2544: ``mean_ns``, the mean over repetitions of each trial's mean latency;
- RFC 8219: ``typical_ns`` (median over repetitions of each trial's median)
  and ``worst_case_ns`` (median of each trial's 99.9th percentile);
- PDV (RFC 5481 §4.2): ``pdv_p999_ns`` = D99.9 − Dmin, median over repetitions;
- IPDV (RFC 5481 §4.1): min, median and max over repetitions of each
  trial's min, median and max.

Each load carries the tester's own latency floor and error bar from its
self-test (``tester_latency_floor``, trial/tester_limits.py), to read the
delays against. The summaries are over stream summaries: a bidirectional trial has one
stream of a family each way. ``repetitions`` counts the trials with a
measured latency, ``streams`` the stream summaries.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from ..core.tester import Tester
from ..core.params import check
from ..core.rates import check_rates


#: How a latency test compares the families (``families``): "paired", both in every trial (the mixes 100/0 and
#: 0/100 run as one 50/50 mix, core/frames.paired_mixes), or "separate", each in trials of its own.
FAMILY_DESIGNS = ("paired", "separate")


@dataclass(frozen=True)
class Params:
    trial_duration_s: float = 120.0
    repeat: int = 20
    loads: tuple[str, ...] = ("throughput",)
    families: str = "paired"

    def __post_init__(self) -> None:
        check(self.families in FAMILY_DESIGNS, "families", f"{self.families!r} is not one of {', '.join(FAMILY_DESIGNS)}")
        check(0 < self.trial_duration_s <= 86400, "trial_duration_s", f"{self.trial_duration_s:g} s is outside (0, 86400]")
        check(1 <= self.repeat <= 1000, "repeat", f"{self.repeat} is outside 1..1000 (the RFCs ask for at least 20)")
        check(bool(self.loads), "loads", "give at least one load: \"throughput\" or a rate such as \"50%\"")
        check_rates(self.loads, "loads", also=("throughput",))


def _median(xs: list[float]) -> float | None:
    return statistics.median(xs) if xs else None


def summarize(trials_by_family: dict[int, list[dict]]) -> dict:
    """Per IP version, the summaries above from each trial's stream summaries."""
    out = {}
    for v, streams in sorted(trials_by_family.items()):
        lat = [s["latency_ns"] for s in streams if s.get("latency_ns")]
        pdv = [s["pdv_ns"] for s in streams if s.get("pdv_ns")]
        ipdv = [s["ipdv_ns"] for s in streams if s.get("ipdv_ns")]
        out[str(v)] = {
            "repetitions": len(lat),
            "mean_ns": statistics.fmean(x["mean"] for x in lat) if lat else None,
            "typical_ns": _median([x["p50"] for x in lat]),
            "worst_case_ns": _median([x["p999"] for x in lat]),
            "min_ns": min((x["min"] for x in lat), default=None),
            "max_ns": max((x["max"] for x in lat), default=None),
            "stddev_of_means_ns": statistics.stdev([x["mean"] for x in lat]) if len(lat) > 1 else None,
            "pdv_p999_ns": _median([x["p999"] for x in pdv]),
            "ipdv_ns": {"min": min(x["min"] for x in ipdv), "median": _median([x["median"] for x in ipdv]),
                        "max": max(x["max"] for x in ipdv)} if ipdv else None,
        }
    return out


def summarize_trials(trials: list[dict[int, list[dict]]]) -> dict:
    """:func:`summarize` over trials, each its stream summaries by IP
    version; ``repetitions`` counts the trials with a measured latency,
    ``streams`` the stream summaries (the report pools a point's blocks
    through this too)."""
    by_family: dict[int, list[dict]] = {}
    counted: dict[int, int] = {}
    for trial in trials:
        for v, ss in trial.items():
            by_family.setdefault(v, []).extend(ss)
            counted[v] = counted.get(v, 0) + any(s.get("latency_ns") for s in ss)
    families = summarize(by_family)
    for v, f in families.items():
        f["streams"] = f["repetitions"]
        f["repetitions"] = counted.get(int(v), 0)
    return families


def run(tester: Tester, p: Params, loads_fps: list[tuple[str, float]]) -> dict:
    """``loads_fps``: (label, frames/s per direction) pairs, resolved by the caller."""
    rows = []
    for label, fps in loads_fps:
        measured: list[dict[int, list[dict]]] = []
        limited = 0
        floor = None
        for _ in range(p.repeat):
            m = tester.measure(p.trial_duration_s, fps)
            floor = floor or (m.detail or {}).get("tester_latency_floor")
            if m.tester_limited:
                limited += 1
                continue
            measured.append(m.families())
        families = summarize_trials(measured)
        rows.append({"load": label, "load_fps": fps, "tester_limited_trials": limited, "families": families,
                     "tester_latency_floor": floor})
    return {"loads": rows}
