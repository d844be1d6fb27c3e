"""A comparison over the runs of one campaign in time order: each run's
effect and interval, where the machine changed, and a detected change
point (``docs/compare.md``).

The change point is the split of the series into an earlier and a later
part (at least :data:`MIN_SIDE` runs each) whose step best explains the
runs' differences: for each split, the mixed-effects fit with a step
(:func:`.meta.fit`, the step a 0/1 moderator) and its F test; the split
with the largest F is reported when its p-value, multiplied by the number
of splits tried (Bonferroni), and then corrected over every comparison of
the trend (Benjamini–Hochberg, as every family of verdicts), is below α.
A step where the machine changed is the machine's as much as the DUT's:
the mark says so.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from statsmodels.stats.multitest import multipletests

from ..core import machine
from ..store.db import Store
from . import meta
from .across import RunEffect, collect, describe_key
from .stats import ALPHA, CORRECTION

#: The fewest runs on each side of a change point.
MIN_SIDE = 2


@dataclass(frozen=True)
class Trend:
    key: tuple
    runs: tuple[RunEffect, ...]
    #: Indices i (into ``runs``) where run i ran on another machine than run i − 1.
    machine_changes: tuple[int, ...]
    #: Index of the first run after the change point, or None.
    change_at: int | None
    change_p: float | None
    verdict: str

    @property
    def name(self) -> str:
        return describe_key(self.key)


def runs_of(store: Store, campaign: str) -> list[int]:
    """The finished runs of the campaign named ``campaign``, oldest first."""
    rows = [r for r in store.runs() if r["status"] == "finished" and r["name"] == campaign]
    return [r["id"] for r in sorted(rows, key=lambda r: r["started_at_unix_s"])]


def change_point(runs: list[RunEffect]) -> tuple[int | None, float | None]:
    """(index of the first run after the best step, its Bonferroni-corrected p), whether or not
    significant; (None, None) when too few runs have an interval."""
    used = [(i, r) for i, r in enumerate(runs) if r.log_ratio is not None]
    k = len(used)
    splits = list(range(MIN_SIDE, k - MIN_SIDE + 1))
    if not splits:
        return None, None
    y = [r.log_ratio[0] for _, r in used]
    v = [r.log_ratio[1] for _, r in used]
    best = None
    for s in splits:
        step = np.array([[0.0] if j < s else [1.0] for j in range(k)])
        f = meta.fit(y, v, step)
        if f.moderator_f is not None and (best is None or f.moderator_f > best[1]):
            best = (s, f.moderator_f, f.moderator_p)
    if best is None:
        return None, None
    return used[best[0]][0], min(1.0, best[2] * len(splits))


def trends(store: Store, campaign: str) -> list[Trend]:
    """Every comparison of the campaign's finished runs that more than one run has."""
    ids = runs_of(store, campaign)
    a = collect(store, ids)
    envs = {i: a.runs[i]["environment"] for i in ids}
    series = []
    for k, effs in a.effects.items():
        effs = sorted(effs, key=lambda e: e.started_at_unix_s)
        if len(effs) < 2:
            continue
        changes = tuple(i for i in range(1, len(effs)) if not machine.same(envs[effs[i - 1].run_id], envs[effs[i].run_id]))
        series.append((k, effs, changes, *change_point(effs)))
    tested = [i for i, s in enumerate(series) if s[4] is not None]
    adjusted = dict(zip(tested, multipletests([series[i][4] for i in tested], alpha=ALPHA, method=CORRECTION[0])[1])) \
        if tested else {}
    out = []
    for i, (k, effs, changes, best, _) in enumerate(series):
        p = float(adjusted[i]) if i in adjusted else None
        at = best if p is not None and p < ALPHA else None
        if at is not None:
            where = f"a change point before run {effs[at].run_id} ({CORRECTION[1]} p = {p:.2g})"
            if at in changes:
                where += ": the machine changed there too"
        elif p is None:
            where = f"no change point tested ({len([e for e in effs if e.log_ratio])} runs with an interval; needs {2 * MIN_SIDE})"
        else:
            where = f"no change point ({CORRECTION[1]} p = {p:.2g})"
        out.append(Trend(k, tuple(effs), changes, at, p, where))
    return out
