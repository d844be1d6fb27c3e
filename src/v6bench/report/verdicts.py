"""Every comparison a report states, decided together: the report's
comparisons one family of tests for the multiple-comparison correction
(:func:`..stats.decide`, Benjamini–Hochberg), so that twelve comparisons at
α = 0.05 do not yield a "differs" by chance alone, and its A/A controls
another (:data:`..stats.FAMILIES`). Views look their comparisons up here by
:attr:`Pair.key`.
"""

from __future__ import annotations

from dataclasses import replace

from . import builds, family_pairs, log_ratio, samples, scenario_pairs, sequential
from .data import RunData
from .regression import mix_slope
from .stats import ALPHA, Comparison, compare, decide, line_limited

_cache: dict[int, tuple[RunData, dict]] = {}


def _compared(p: samples.Pair, alpha: float = ALPHA) -> Comparison:
    """One pair compared by its design (before the correction): a
    throughput at the line rate is the link's (:func:`.stats.line_limited`);
    series from labs built apart are compared build by build
    (:mod:`.builds`); ``alpha``: the interval's level is 1 − alpha (a
    sequential design's look; a mix regression keeps α)."""
    family = "controls" if p.control else "report"
    if p.design == "mix regression":
        return mix_slope(p.observations, p.higher, p.excluded, p.name_b, family)
    a, b = p.values.get(p.name_a, []), p.values.get(p.name_b, [])
    if p.line_limited:
        return line_limited(a, b, p.line_limited, p.name_a, p.higher, p.excluded, p.name_b, family)
    few = builds.too_few(p) if p.builds else None
    if p.builds:
        p = builds.collapsed(p)
        a, b = p.values.get(p.name_a, []), p.values.get(p.name_b, [])
    c = compare(a, b, p.estimator, p.higher, p.resolution_pct, p.excluded, p.name_b, family, p.paired, alpha)
    if few:
        return replace(c, verdict=few, outcome="few", p=None, ci_low_pct=None, ci_high_pct=None, mde_pct=None)
    if c.ci_low_pct is None:  # no verdict of its own (too few, not comparable): nothing to pool
        return c
    lr = log_ratio.of_samples(a, b, p.estimator, p.paired, p.resolution_pct)
    return replace(c, log_ratio=(lr.y, lr.se, lr.df) if lr else None)


def _sequential(p: samples.Pair, record: sequential.Record | None) -> Comparison:
    """A pair compared as its run's design looked at it: in a sequential
    run, at the level of its last look with the sequential p-value
    (:mod:`.sequential`); otherwise as :func:`_compared` does."""
    looks = record.looks(p.key) if record else None
    if not looks:
        return _compared(p)
    design, history = looks
    c = _compared(p, design.alpha_at(history[-1][0]))
    return replace(c, p=sequential.sequential_p(history, design)) if c.p is not None else c


def _decided(pairs: list[samples.Pair], record: sequential.Record | None) -> dict[tuple, tuple[samples.Pair, Comparison]]:
    out = {p.key: (p, _with_loss(p, c)) for p, c in zip(pairs, decide([_sequential(p, record) for p in pairs]))}
    if record is not None and record.out_of_budget:
        out = {k: (p, replace(c, verdict=f"{c.verdict}; the time budget ran out before it was decided")
                   if record.ran_out(k) else c) for k, (p, c) in out.items()}
    return out


def _with_loss(p: samples.Pair, c: Comparison) -> Comparison:
    """The verdict, with what the DUT lost in the compared trials where it
    lost any (:func:`.samples.loss_caveat`): the verdict stands, its reader
    is told what the delays measured."""
    caveat = samples.loss_caveat(p)
    return replace(c, verdict=f"{c.verdict}; {caveat}") if caveat else c


def _pairs(data: RunData) -> list[samples.Pair]:
    """Every pair the run's report compares."""
    compared = [p for p in family_pairs.families(data)
                if (p.name_a in p.values and p.name_b in p.values) or p.observations or p.excluded]
    return compared + family_pairs.flow_pairs(data) + scenario_pairs.scenario_searches(data) \
        + scenario_pairs.network_types(data)


def at_level(data: RunData, alpha: float) -> dict[tuple, tuple[samples.Pair, Comparison]]:
    """Every comparison of ``data`` with its interval at 1 − ``alpha``,
    before the correction: a sequential design's look (campaign/looks.py)."""
    return {p.key: (p, _compared(p, alpha)) for p in _pairs(data)}


def of(data: RunData) -> dict[tuple, tuple[samples.Pair, Comparison]]:
    """Every comparison of the run (IPv4/IPv6 and network types), keyed by
    (metric, point, B's name), with its pair; computed once per run data.
    A sequential run's comparisons are stated at their last look
    (:func:`_sequential`)."""
    hit = _cache.get(id(data))
    if hit is None or hit[0] is not data:
        hit = (data, _decided(_pairs(data), sequential.Record.of(data.run)))
        _cache.clear()
        _cache[id(data)] = hit
    return hit[1]
