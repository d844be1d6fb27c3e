"""Every comparison a report states, decided together: the report's
comparisons one family of tests for the multiple-comparison correction
(:func:`..stats.decide`, Benjamini–Hochberg), so that twelve comparisons at
α = 0.05 do not yield a "differs" by chance alone, and its A/A controls
another (:data:`..stats.FAMILIES`). Views look their comparisons up here by
:attr:`Pair.key`.
"""

from __future__ import annotations

from . import samples
from .data import RunData
from .stats import Comparison, compare, decide

_cache: dict[int, tuple[RunData, dict]] = {}


def _decided(pairs: list[samples.Pair]) -> dict[tuple, tuple[samples.Pair, Comparison]]:
    raw = [compare(p.values.get(p.name_a, []), p.values.get(p.name_b, []), p.estimator, p.higher, p.resolution_pct,
                   p.excluded, p.name_b, "controls" if p.control else "report", p.paired) for p in pairs]
    return {p.key: (p, c) for p, c in zip(pairs, decide(raw))}


def of(data: RunData) -> dict[tuple, tuple[samples.Pair, Comparison]]:
    """Every comparison of the run (IPv4/IPv6 and network types), keyed by
    (metric, point, B's name), with its pair; computed once per run data."""
    hit = _cache.get(id(data))
    if hit is None or hit[0] is not data:
        compared = [p for p in samples.families(data) if (p.name_a in p.values and p.name_b in p.values) or p.excluded]
        hit = (data, _decided(compared + samples.scenario_throughput(data) + samples.network_types(data)))
        _cache.clear()
        _cache[id(data)] = hit
    return hit[1]
