"""Latency against frame size per mix and load (RFC 2544 §26.2, RFC 8219
§7.2; seed 002's "Average Latency at the N % Line Rate"), and delay
histograms per network type (seed 003 Fig. 3–4, Tables 1–3).

The histograms are the engine's per-frame latency histograms (HdrHistogram,
:mod:`..hdr`) of every trial at that load, merged over repetitions: every
frame counted, not a sample. Their statistics table is seed 003's Table 1
(min, max, average, mode, standard deviation) with skewness and kurtosis,
and its Table 3 (increase of the mean over the first network type, here
with a 95 % confidence interval over the trials' means, and the same for
their medians).
"""

from __future__ import annotations

import math

import numpy as np

from .. import hdr
from ..data import RunData
from ..model import Figure, Section, Series, Table
from .. import scenario_pairs, verdicts
from ..samples import delay_where, load_trials, streams_loss_ratio
from ..scenario_pairs import network_type
from ..stats import COMPARISON_COLUMNS, DESCRIPTION_COLUMNS, describe_histogram
from .compare import HOW_TO_READ
from ..group import by, families, series_key
from ...methods.latency import summarize_trials

HIST_BINS = 60


def latency(data: RunData) -> Section | None:
    tests = sorted(data.of("latency"), key=lambda t: (series_key(t), t.frame_size))
    if not tests:
        return None
    loads = list(dict.fromkeys(row["load"] for t in tests for row in t.result["loads"]))
    # One point's repetition blocks pooled: (series, frame size, load) -> (its tests' rows, summaries by family).
    points = {}
    for (key, fs), ts in by(tests, lambda t: (series_key(t), t.frame_size)).items():
        for load in loads:
            rows_at = [(t, row) for t in ts for row in t.result["loads"] if row["load"] == load]
            if rows_at:
                points[(key, fs, load)] = (rows_at, _pooled(rows_at))
    blocks: list = []
    for load in loads:
        series = []
        for key, ts in by(tests, series_key).items():
            pooled = {fs: fams for (k, fs, ld), (_, fams) in points.items() if k == key and ld == load}
            versions = sorted({int(v) for fams in pooled.values() for v in fams})
            for v in versions:
                x = tuple(sorted(fs for fs, fams in pooled.items() if (fams.get(str(v)) or {}).get("typical_ns")))
                if x:
                    name = f"{ts[0].label()} IPv{v}" if len(versions) > 1 or ts[0].mix not in ("100/0", "0/100") else ts[0].label()
                    series.append(Series(name, x, tuple(pooled[fs][str(v)]["typical_ns"] / 1e3 for fs in x)))
        if series:
            blocks.append(Figure(f"latency-{_slug(load)}", f"Latency against frame size at load {load}", "frame size [B]",
                                 "typical latency (median) [µs]", tuple(series),
                                 note="RFC 8219 typical latency: median over repetitions of each trial's median."))
    rows = []
    for (_, fs, load), (rows_at, fams) in points.items():
        t = rows_at[0][0]
        floor = next((row["tester_latency_floor"] for _, row in rows_at if row.get("tester_latency_floor")), {})
        for v, f in fams.items():
            ipdv = f.get("ipdv_ns") or {}
            rows.append((t.scenario, t.mix + t.traffic, t.direction, fs, load, f"IPv{v}", len(rows_at), f["repetitions"],
                         _us(f["mean_ns"]), _us(f["typical_ns"]), _us(f["worst_case_ns"]), _us(f["min_ns"]), _us(f["max_ns"]),
                         _us(f["pdv_p999_ns"]), _us(ipdv.get("median")), _worst_loss_pct(rows_at, int(v)),
                         _us(floor.get("floor_ns")), _us(floor.get("stddev_ns")),
                         sum(row.get("tester_limited_trials", 0) for _, row in rows_at)))
    blocks.append(Table("latency", "Latency and delay variation per point",
                        ("scenario", "mix", "dir", "frame size [B]", "load", "family", "blocks", "repetitions", "mean [µs]",
                         "typical (median) [µs]", "worst case (p99.9) [µs]", "min [µs]", "max [µs]", "PDV p99.9 [µs]",
                         "IPDV median [µs]", "DUT loss, worst trial [%]", "tester floor [µs]", "tester floor ± [µs]",
                         "tester-limited trials"), tuple(rows),
                        "RFC 2544 mean, RFC 8219 typical and worst case, RFC 5481 PDV and IPDV, over the trials of "
                        "all of a point's repetition blocks (repetitions: trials with a measured latency). A load at "
                        "which the DUT lost frames is beyond its throughput, where RFC 2544 §26.2 measures latency "
                        "(a queue that overflows adds its own delay). The tester floor is the "
                        "tester's own latency back to back (self-test: median of its trials' medians ± their standard "
                        "deviation): a delay near it is mostly the tester's."))
    return Section("latency", "Latency against frame size",
                   "Every frame timestamped by the engine; per load and family over the repetitions.", tuple(blocks))


def _pooled(rows_at: list[tuple]) -> dict[str, dict]:
    """One point's summaries at one load over all its blocks: the latency
    method's own (:func:`~v6bench.methods.latency.summarize_trials`) over
    the pooled trials the comparisons use (:func:`..samples.load_trials`:
    the tester did not limit them, no delay is suspect)."""
    return summarize_trials([{v: ss for v, ss in families(trial).items() if t.family in (None, v)}
                             for t, row in rows_at for trial in load_trials(t, row)])


def _worst_loss_pct(rows_at: list[tuple], version: int) -> float | None:
    """The largest share of a family's frames the DUT lost in one of the
    point's trials, in % (None: no trial sent that family)."""
    ratios = [streams_loss_ratio([s for s in families(trial).get(version, []) if t.family in (None, version)])
              for t, row in rows_at for trial in load_trials(t, row)]
    known = [r for r in ratios if r is not None]
    return 100 * max(known) if known else None


def _us(ns: float | None) -> float | None:
    return None if ns is None else ns / 1e3


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text).strip("-").lower()


def delay_histograms(data: RunData) -> Section | None:
    """One histogram figure per frame size and load; a series per network
    type (scenario) and family."""
    tests = sorted(data.of("latency"), key=series_key)
    blocks = []
    stat_rows = []
    groups = by(tests, lambda t: (t.traffic, t.direction, t.frame_size))
    for (traffic, d, fs), ts in groups.items():
        for load in dict.fromkeys(row["load"] for t in ts for row in t.result["loads"]):
            hists: dict[str, list] = {}
            for t in ts:
                for row in t.result["loads"]:
                    if row["load"] != load:
                        continue
                    for trial in load_trials(t, row):
                        for v in families(trial):
                            h = _trial_hist(trial, v)
                            if h:
                                hists.setdefault(network_type(t, v), []).append(h)
            if not hists:
                continue
            merged = {k: [(v / 1e3, c) for v, c in hdr.merge(h)] for k, h in hists.items()}
            edges = _log_edges(merged)
            where = delay_where(traffic, d, fs, load)
            series = []
            for k, buckets in merged.items():
                total = sum(c for _, c in buckets)
                counts = np.zeros(HIST_BINS)
                idx = np.clip(np.searchsorted(edges, [v for v, _ in buckets], side="right") - 1, 0, HIST_BINS - 1)
                np.add.at(counts, idx, [c for _, c in buckets])
                series.append(Series(k, tuple(float(math.sqrt(a * b)) for a, b in zip(edges[:-1], edges[1:])),
                                     tuple(float(100 * c / total) for c in counts), "hist"))
                stat_rows.append((where, k) + describe_histogram(buckets, _mode_bin(buckets)).row())
            ident = _slug(f"delay-{where}")
            blocks.append(Figure(ident, f"Delay histogram, {where}", "one-way delay [µs]", "frames [%]", tuple(series),
                                 x_log=True,
                                 note=f"{HIST_BINS} logarithmic bins from {edges[0]:.4g} to {edges[-1]:.4g} µs (0.1th to 99.9th "
                                      "percentile over all series); frames outside count in the first or last bin. Every "
                                      "frame of every repetition."))
    if not blocks:
        return None
    blocks.append(Table("delay-statistics", "Delay statistics per network type (µs)",
                        ("point", "network type") + tuple(f"{c} [µs]" if c in ("min", "max", "mean", "mode", "stddev") else c
                                                          for c in DESCRIPTION_COLUMNS), tuple(stat_rows),
                        "Over every frame (n = frames). Mode: centre of the fullest histogram bin. Seed 003 Table 1."))
    decided = verdicts.of(data)
    cmp_rows = [(p.metric, p.point, p.name_b, p.name_a) + c.row() for p in scenario_pairs.network_types(data)
                for _, c in [decided[p.key]]]
    if cmp_rows:
        blocks.append(Table("delay-increase", "Delay and cost per frame against the first network type",
                            ("metric", "point", "network type (B)", "against (A)") + COMPARISON_COLUMNS, tuple(cmp_rows),
                            "Per-trial median delays, one value per repetition (seed 003 Table 3 compares means; on a "
                            "shared machine the means are dominated by scheduling stalls), and the DUT's CPU time per "
                            "frame of each trial (of each family's runs in a trial sent in runs). " + HOW_TO_READ))
    return Section("delay", "Delay histograms per network type",
                   "The distribution of every frame's delay, per scenario and family, as in seed 003 Fig. 3–4.", tuple(blocks))


def _trial_hist(trial: dict, version: int) -> list[tuple[int, int]] | None:
    eng = ((trial.get("result") or {}).get("engine") or {}).get("streams") or []
    hs = [hdr.decode(s["latency_histogram"]) for s in eng if s["ip_version"] == version and s.get("latency_histogram")]
    return hdr.merge(hs) if hs else None


def _quantile(buckets: list[tuple[float, int]], q: float) -> float:
    total = sum(c for _, c in buckets)
    acc = 0
    for v, c in buckets:
        acc += c
        if acc >= q * total:
            return v
    return buckets[-1][0]


def _log_edges(merged: dict[str, list[tuple[float, int]]]) -> np.ndarray:
    """Logarithmic bin edges from the lowest 0.1th to the highest 99.9th
    percentile of the series: delays on a shared machine have a long tail
    that linear bins would squeeze the body of the distribution against."""
    lo = max(min(_quantile(b, 0.001) for b in merged.values()), 1e-3)
    hi = max(max(_quantile(b, 0.999) for b in merged.values()), lo * 1.01)
    return np.geomspace(lo, hi, HIST_BINS + 1)


def _mode_bin(buckets: list[tuple[float, int]]) -> float:
    """The width the mode is taken at: a fifth of the interquartile range,
    rounded to 1, 2 or 5 × 10^k µs (at least 0.1 µs)."""
    w = max((_quantile(buckets, 0.75) - _quantile(buckets, 0.25)) / 5, 0.1)
    mag = 10 ** math.floor(math.log10(w))
    return min((m * mag for m in (1, 2, 5, 10) if m * mag >= w), default=10 * mag)
