"""Before and after a change (a firmware or kernel upgrade, another
configuration): two runs of one DUT, metric by metric, each difference
held against the run-to-run spread of that lab (``docs/compare.md``).

Two runs always differ a little, also when nothing changed: the lab is
built anew, the machine is in another state. Within-run intervals do not
see that, so a change is judged against the spread between repeated runs
of the same campaign, configuration and machine (:func:`repeats`), found
in the store: each side of the change is the runs that repeat it
unchanged, the run itself among them.

- **Two set-ups** (the usual case: B changed something): each side's
  runs give the mean and the sample variance of the logarithm of the
  metric's run centre; the change is ``d = mean_B − mean_A`` (B/A as
  the ratio of geometric means), its standard error ``√(s²_A/n_A +
  s²_B/n_B)``, each side with its own spread, its interval and test by
  Welch's t on Welch–Satterthwaite degrees of freedom. Each side needs
  :data:`MIN_RUNS` runs (its spread on 2 df at least).
- **One set-up** (A and B repeat each other: an A/A check): ``d =
  ln(B/A)``, standard error ``s √2`` with ``s`` the set-up's runs' spread
  on ``n − 1`` df; :data:`MIN_RUNS` runs.

The tests are corrected together over the metrics (Benjamini–Hochberg).
Below :data:`MIN_RUNS` no claim is made: "not enough runs", and how many
more unchanged runs of which side would give one. "No change" says the
change it could have detected (80 % power) and the runs a side that
would detect ±:data:`DETECT_PCT` %.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, replace

from scipy import stats as sps
from statsmodels.stats.multitest import multipletests

from ..core import machine
from ..store.db import Store
from .across import Across, collect
from .attributes import attributes
from .stats import ALPHA, CORRECTION, POWER, ratio_pct, welch_df

#: The runs of a set-up (the run and its unchanged repeats) a before/after verdict needs on each side.
MIN_RUNS = 3
#: The change a "no change" verdict says how many runs a side would detect [%].
DETECT_PCT = 1.0
#: More runs a side than this is "more than" in the words.
MAX_RUNS_SAID = 1000


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
    #: Each side's run-to-run spread (the sample standard deviation of ln(centre), as ± %).
    spread_pct: float | None = None
    spread_after_pct: float | None = None
    spread_df: float = 0.0
    #: The runs each side's mean came from (two set-ups), else 1 (the two runs themselves).
    runs_before: int = 1
    runs_after: int = 1
    p: float | None = None
    #: The change this test could have detected with 80 % power [± %].
    detectable_pct: float | None = None
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


def _logs(values: dict[int, float], group: list[int]) -> list[float]:
    return [math.log(values[r]) for r in group if r in values]


def compare(store: Store, before: int, after: int) -> BeforeAfter:
    """Run ``after`` against run ``before``, metric by metric (module docstring)."""
    ra, rb = store.run(before), store.run(after)
    ga, gb = repeats(store, ra), repeats(store, rb)
    one_setup = set(ga) == set(gb)
    ids = list(dict.fromkeys([before, after, *ga, *gb]))
    centres = _centres(collect(store, ids))
    changes = []
    for (metric, point, series, design), vals in centres.items():
        if before not in vals or after not in vals:
            continue
        la = _logs(vals, ga)
        lb = la if one_setup else _logs(vals, gb)
        name = f"{series} ({design})"
        if one_setup:
            d = math.log(vals[after] / vals[before])
            c = Change(metric, point, name, vals[before], vals[after], ratio_pct(d))  # the runs themselves; their spread from la
        else:
            d = sum(lb) / len(lb) - sum(la) / len(la)
            c = Change(metric, point, name, math.exp(sum(la) / len(la)), math.exp(sum(lb) / len(lb)), ratio_pct(d),
                       runs_before=len(la), runs_after=len(lb))
        if min(len(la), len(lb)) >= MIN_RUNS:
            c = _tested(c, d, la, lb, one_setup)
        changes.append(c)
    tested = [i for i, c in enumerate(changes) if c.p is not None]
    if tested:
        adj = multipletests([changes[i].p for i in tested], alpha=ALPHA, method=CORRECTION[0])[1]
        for i, q in zip(tested, adj):
            changes[i] = _decided(changes[i], float(q), one_setup)
    short = "" if tested else _short(before, after, ga, gb, one_setup)
    if short:
        changes = [replace(c, verdict="not enough runs") for c in changes]
    return BeforeAfter(before, after, machine.same(ra["environment"], rb["environment"]),
                       ra.get("campaign_sha256") == rb.get("campaign_sha256"), {"before": ga, "after": gb},
                       tuple(changes), short)


def _tested(c: Change, d: float, la: list[float], lb: list[float], one_setup: bool) -> Change:
    """The change's standard error, df, interval and p from each side's runs (module docstring)."""
    sa, sb = statistics.stdev(la), statistics.stdev(lb)
    if one_setup:
        se, df = math.sqrt(2) * sa, float(len(la) - 1)
    else:
        se2a, se2b = sa ** 2 / len(la), sb ** 2 / len(lb)
        se = math.sqrt(se2a + se2b)
        df = welch_df(se2a, len(la), se2b, len(lb)) if se > 0 else float(len(la) + len(lb) - 2)
    t = float(sps.t.ppf(1 - ALPHA / 2, df))
    p = float(2 * sps.t.sf(abs(d) / se, df)) if se > 0 else (1.0 if d == 0 else 0.0)
    return replace(c, low_pct=ratio_pct(d - t * se), high_pct=ratio_pct(d + t * se), spread_pct=ratio_pct(sa),
                   spread_after_pct=None if one_setup else ratio_pct(sb), spread_df=df, p=p,
                   detectable_pct=ratio_pct((t + float(sps.t.ppf(POWER, df))) * se))


def _short(before: int, after: int, ga: list[int], gb: list[int], one_setup: bool) -> str:
    """Why no claim is made, and how many more unchanged runs of which side would give one."""
    if one_setup:
        return (f"not enough runs: the store holds {len(ga)} finished run(s) of run {before}'s campaign, configuration and "
                f"machine; a before/after verdict needs {MIN_RUNS}: run the same campaign unchanged "
                f"{MIN_RUNS - len(ga)} more time(s)")
    need = [f"run {r}'s set-up {MIN_RUNS - len(g)} more time(s)" for r, g in ((before, ga), (after, gb)) if len(g) < MIN_RUNS]
    return (f"not enough runs: the store holds {len(ga)} finished run(s) of run {before}'s campaign, configuration and "
            f"machine and {len(gb)} of run {after}'s; a before/after verdict needs {MIN_RUNS} of each (each side's "
            f"own run-to-run spread): repeat " + " and ".join(need) + ", unchanged")


def _runs_to_detect(c: Change) -> int | None:
    """Two set-ups: the runs a side (equal sides, today's spreads) that would detect ±DETECT_PCT % with
    80 % power (t on the pooled 2n − 2 df); None past MAX_RUNS_SAID."""
    s2 = math.log1p(c.spread_pct / 100) ** 2 + math.log1p(c.spread_after_pct / 100) ** 2
    want = math.log1p(DETECT_PCT / 100)
    z = float(sps.norm.ppf(1 - ALPHA / 2) + sps.norm.ppf(POWER))
    first = max(MIN_RUNS, math.ceil(z * z * s2 / want ** 2))  # the normal's answer: t's is no smaller
    for n in range(first, MAX_RUNS_SAID + 1):
        df = 2 * n - 2
        se = math.sqrt(s2 / n)
        if (float(sps.t.ppf(1 - ALPHA / 2, df)) + float(sps.t.ppf(POWER, df))) * se <= want:
            return n
    return None


def _decided(c: Change, q: float, one_setup: bool) -> Change:
    spread = (f"±{c.spread_pct:.2g} % a run" if one_setup
              else f"±{c.spread_pct:.2g} % a run over {c.runs_before} before, ±{c.spread_after_pct:.2g} % over "
                   f"{c.runs_after} after")
    if q < ALPHA:
        word = "higher" if c.change_pct > 0 else "lower"
        verdict = (f"changed: {abs(c.change_pct):.2g} % {word}, beyond the lab's run-to-run spread "
                   f"({spread}, {c.spread_df:.3g} df; {CORRECTION[1]} p = {q:.2g})")
    else:
        n = None if one_setup else _runs_to_detect(c)
        runs = ("" if one_setup else f"; {n} runs a side would detect ±{DETECT_PCT:g} %" if n is not None
                else f"; more than {MAX_RUNS_SAID} runs a side would be needed for ±{DETECT_PCT:g} %")
        verdict = (f"no change beyond the run-to-run spread ({spread}; {CORRECTION[1]} p = {q:.2g}; could have detected "
                   f"±{c.detectable_pct:.2g} %{runs})")
    return replace(c, p_adjusted=q, verdict=verdict)
