"""Before and after a change (a firmware or kernel upgrade, another
configuration): two runs of one DUT, metric by metric, each difference
held against the run-to-run spread of that lab (``docs/compare.md``).

Two runs always differ a little, also when nothing changed: the lab is
built anew, the machine is in another state. Within-run intervals do not
see that, so a change is judged against the spread between repeated runs
of the same campaign on the same machine and configuration (A/A runs),
estimated from the store: for each metric, the pooled variance of the
logarithm of its run centre within each group of repeated runs (one group
for A's set-up, one for B's; runs of other set-ups do not count),
``s²`` on ``df = Σ (nᵍ − 1)`` degrees of freedom. The change B/A is
``d = ln(centre_B / centre_A)`` with standard error ``s √2``, its interval
and test from a t distribution with ``df`` degrees of freedom, corrected
together over the metrics (Benjamini–Hochberg). With ``df`` below
:data:`MIN_SPREAD_DF` no claim is made: "not enough runs", and how many more
repeated runs would give one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from scipy import stats as sps
from statsmodels.stats.multitest import multipletests

from ..core import machine
from ..store.db import Store
from .across import Across, collect
from .attributes import attributes
from .stats import ALPHA, CORRECTION, POWER

#: The degrees of freedom of the run-to-run spread a before/after verdict needs
#: (3 runs of one set-up, or two set-ups run twice each).
MIN_SPREAD_DF = 2


@dataclass(frozen=True)
class Change:
    """One metric (a series of a comparison: IPv4's median delay at a point, …) before and after."""

    metric: str
    point: str
    series: str
    before: float
    after: float
    change_pct: float
    low_pct: float | None = None
    high_pct: float | None = None
    spread_pct: float | None = None
    spread_df: int = 0
    p: float | None = None
    p_adjusted: float | None = None
    verdict: str = ""


@dataclass(frozen=True)
class BeforeAfter:
    before: int
    after: int
    same_machine: bool
    same_campaign: bool
    #: The repeated runs the spread came from, by set-up ("A's", "B's") → run ids.
    repeats: dict
    changes: tuple[Change, ...]
    #: Why no claim is made (too few repeated runs), else "".
    short: str = ""


def _setup(run: dict) -> tuple:
    """What must not change for two runs to be repeats (an A/A pair): the
    campaign file, the lab and DUT configuration, the DUT's own
    description (an external router's software), the kernel; the machine
    is compared apart (:func:`..core.machine.same`)."""
    a = attributes(run)
    return (run.get("campaign_sha256") or run.get("name"), a["config"], a["dut"], a["kernel"])


def repeats(store: Store, run: dict) -> list[int]:
    """The finished runs in the store that repeat ``run`` unchanged (:func:`_setup`, same machine)."""
    want = _setup(run)
    return [r["id"] for r in store.runs() if r["status"] == "finished" and _setup(r) == want
            and machine.same(r["environment"], run["environment"])]


def _centres(a: Across) -> dict[tuple, dict[int, float]]:
    """(metric, point, series, design) → run → the series' centre in that run (positive values only)."""
    out: dict[tuple, dict[int, float]] = {}
    for (metric, point, name_b, design), effs in a.effects.items():
        for e in effs:
            for series, centre in ((e.name_a, e.centre_a), (name_b, e.centre_b)):
                if centre is not None and centre > 0:
                    out.setdefault((metric, point, series, design), {})[e.run_id] = centre
    return out


def _spread(values: dict[int, float], groups: list[list[int]]) -> tuple[float | None, int]:
    """The pooled within-group variance of ln(value) and its degrees of freedom."""
    ss, df = 0.0, 0
    for g in groups:
        xs = [math.log(values[r]) for r in g if r in values]
        if len(xs) >= 2:
            m = sum(xs) / len(xs)
            ss += sum((x - m) ** 2 for x in xs)
            df += len(xs) - 1
    return (ss / df if df else None), df


def compare(store: Store, before: int, after: int) -> BeforeAfter:
    """Run ``after`` against run ``before``, metric by metric (module docstring)."""
    ra, rb = store.run(before), store.run(after)
    ga, gb = repeats(store, ra), repeats(store, rb)
    groups = [ga] if set(ga) == set(gb) else [ga, gb]
    ids = list(dict.fromkeys([before, after, *ga, *gb]))
    centres = _centres(collect(store, ids))
    changes = []
    for (metric, point, series, design), vals in centres.items():
        if before not in vals or after not in vals:
            continue
        s2, df = _spread(vals, groups)
        d = math.log(vals[after] / vals[before])
        c = Change(metric, point, f"{series} ({design})", vals[before], vals[after], 100 * math.expm1(d), spread_df=df)
        if s2 is not None and df >= MIN_SPREAD_DF:
            se = math.sqrt(2 * s2)
            t = float(sps.t.ppf(1 - ALPHA / 2, df))
            p = float(2 * sps.t.sf(abs(d) / se, df)) if se > 0 else (1.0 if d == 0 else 0.0)
            c = Change(c.metric, c.point, c.series, c.before, c.after, c.change_pct, 100 * math.expm1(d - t * se),
                       100 * math.expm1(d + t * se), 100 * math.expm1(math.sqrt(s2)), df, p)
        changes.append(c)
    tested = [i for i, c in enumerate(changes) if c.p is not None]
    if tested:
        adj = multipletests([changes[i].p for i in tested], alpha=ALPHA, method=CORRECTION[0])[1]
        for i, q in zip(tested, adj):
            changes[i] = _decided(changes[i], float(q))
    short = ""
    if not tested:
        df = max((c.spread_df for c in changes), default=0)
        need = MIN_SPREAD_DF - df
        short = (f"not enough runs: the store holds {len(ga)} finished run(s) of run {before}'s campaign, configuration "
                 f"and machine" + ("" if groups == [ga] else f" and {len(gb)} of run {after}'s")
                 + f" (run-to-run spread on {df} degree(s) of freedom; a before/after verdict needs {MIN_SPREAD_DF}): "
                 f"run the same campaign unchanged {need} more time(s) on one of them")
        changes = [Change(c.metric, c.point, c.series, c.before, c.after, c.change_pct, spread_df=c.spread_df,
                          verdict="not enough runs") for c in changes]
    return BeforeAfter(before, after, machine.same(ra["environment"], rb["environment"]),
                       ra.get("campaign_sha256") == rb.get("campaign_sha256"), {"before": ga, "after": gb},
                       tuple(changes), short)


def _decided(c: Change, q: float) -> Change:
    se_df = c.spread_df
    detect = 100 * math.expm1((float(sps.t.ppf(1 - ALPHA / 2, se_df)) + float(sps.t.ppf(POWER, se_df)))
                              * math.sqrt(2) * math.log1p(c.spread_pct / 100))
    if q < ALPHA:
        word = "higher" if c.change_pct > 0 else "lower"
        verdict = (f"changed: {abs(c.change_pct):.2g} % {word}, beyond the lab's run-to-run spread "
                   f"(±{c.spread_pct:.2g} % a run, {c.spread_df} df; {CORRECTION[1]} p = {q:.2g})")
    else:
        verdict = (f"no change beyond the run-to-run spread ({CORRECTION[1]} p = {q:.2g}; could have detected "
                   f"±{detect:.2g} %)")
    return Change(c.metric, c.point, c.series, c.before, c.after, c.change_pct, c.low_pct, c.high_pct, c.spread_pct,
                  c.spread_df, c.p, q, verdict)
