"""The statistics of a report: descriptive statistics of a sample or of a
delay histogram, IPv4 against IPv6 comparisons, and one-way ANOVA.

- :func:`describe`: n, min, max, mean, mode, standard deviation (n − 1),
  skewness and excess kurtosis (seed 003 Table 1; seed 000 §4 checks
  normality by |skewness|, |kurtosis| ≤ 2 before its ANOVA).
- :func:`compare`: the difference B − A (IPv6 − IPv4) in percent of A's
  mean, its 95 % confidence interval (Welch's, over repetitions; the
  interval is of the difference of means, divided by A's mean, so A's own
  uncertainty is not propagated into the divisor), Welch's t-test and the
  Mann–Whitney U test (two-sided), and a verdict in words. A difference
  whose interval contains 0 is "within noise"; with one repetition a side
  there is no test, and the verdict says so (or, for a search, whether the
  difference is within its resolution).
- :func:`anova`: one-way ANOVA across groups (seed 000 Table 8, reset kinds).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

ALPHA = 0.05


@dataclass(frozen=True)
class Description:
    n: int
    min: float | None
    max: float | None
    mean: float | None
    mode: float | None
    stddev: float | None
    skewness: float | None
    kurtosis: float | None

    def row(self) -> tuple:
        return (self.n, self.min, self.max, self.mean, self.mode, self.stddev, self.skewness, self.kurtosis)


DESCRIPTION_COLUMNS = ("n", "min", "max", "mean", "mode", "stddev", "skewness", "kurtosis (excess)")


def _moments(x: np.ndarray, w: np.ndarray) -> tuple[float, float | None, float | None, float | None]:
    n = w.sum()
    mean = float((x * w).sum() / n)
    d = x - mean
    m2 = float((w * d ** 2).sum() / n)
    if n < 2:
        return mean, None, None, None
    sd = math.sqrt(m2 * n / (n - 1))
    if m2 == 0:
        return mean, sd, None, None
    m3 = float((w * d ** 3).sum() / n)
    m4 = float((w * d ** 4).sum() / n)
    return mean, sd, m3 / m2 ** 1.5, m4 / m2 ** 2 - 3.0


def describe(values: list[float]) -> Description:
    """Of a sample (e.g. one value per repetition). The mode is the most
    frequent value when some value repeats, else None (no mode); skewness
    and kurtosis need three values or more."""
    if not values:
        return Description(0, None, None, None, None, None, None, None)
    x = np.asarray(values, dtype=float)
    mean, sd, skew, kurt = _moments(x, np.ones_like(x))
    if len(values) < 3:  # two values are always symmetric (skewness 0, kurtosis -2): no information
        skew = kurt = None
    uniq, counts = np.unique(x, return_counts=True)
    mode = float(uniq[counts.argmax()]) if counts.max() > 1 else None
    return Description(len(values), float(x.min()), float(x.max()), mean, mode, sd, skew, kurt)


def describe_histogram(buckets: list[tuple[float, int]], mode_bin: float) -> Description:
    """Of a histogram of (value, count). The mode is the centre of the
    fullest bin of width ``mode_bin`` (the width the report draws)."""
    if not buckets:
        return Description(0, None, None, None, None, None, None, None)
    x = np.asarray([v for v, _ in buckets], dtype=float)
    w = np.asarray([c for _, c in buckets], dtype=float)
    mean, sd, skew, kurt = _moments(x, w)
    bins = np.floor(x / mode_bin)
    uniq, inverse = np.unique(bins, return_inverse=True)
    fullest = uniq[np.bincount(inverse, weights=w).argmax()]
    return Description(int(w.sum()), float(x.min()), float(x.max()), mean, float((fullest + 0.5) * mode_bin), sd, skew, kurt)


@dataclass(frozen=True)
class Comparison:
    n_a: int
    n_b: int
    mean_a: float | None
    mean_b: float | None
    diff_pct: float | None
    ci_low_pct: float | None
    ci_high_pct: float | None
    welch_p: float | None
    mann_whitney_p: float | None
    verdict: str
    #: The verdict's kind, one of OUTCOMES (the summary counts by it).
    outcome: str = "other"

    def row(self) -> tuple:
        return (self.n_a, self.mean_a, self.n_b, self.mean_b, self.diff_pct, self.ci_low_pct, self.ci_high_pct,
                self.welch_p, self.mann_whitney_p, self.verdict)


#: A comparison's outcome: significant, within noise, untested (one
#: repetition a side), equal (no spread to test), other (not comparable).
OUTCOMES = ("significant", "noise", "untested", "equal", "other")

COMPARISON_COLUMNS = ("n IPv4", "mean IPv4", "n IPv6", "mean IPv6", "IPv6 − IPv4 %", "95 % CI low %", "95 % CI high %",
                      "Welch p", "Mann–Whitney p", "verdict")


def compare(a: list[float], b: list[float], resolution_pct: float | None = None, higher: str = "higher") -> Comparison:
    """B against A (IPv6 against IPv4). ``resolution_pct``: the measuring
    procedure's own resolution (a search's), within which a difference of
    single measurements is not a difference. ``higher`` names what a
    larger value means in the verdict ("higher", "slower", …)."""
    na, nb = len(a), len(b)
    if not na or not nb:
        return Comparison(na, nb, None, None, None, None, None, None, None, "not measured for both")
    ma, mb = float(np.mean(a)), float(np.mean(b))
    if ma == 0:
        return Comparison(na, nb, ma, mb, None, None, None, None, None, "IPv4 mean is 0: no percentage")
    diff = 100 * (mb - ma) / ma
    lower = "lower" if higher == "higher" else {"slower": "faster", "more": "less"}.get(higher, f"not {higher}")
    word = f"IPv6 {abs(diff):.1f} % {higher if diff > 0 else lower}"
    if na < 2 or nb < 2:
        if resolution_pct is not None and abs(diff) <= resolution_pct:
            return Comparison(na, nb, ma, mb, diff, None, None, None, None,
                              f"within noise: inside the search's {resolution_pct:g} % resolution", "noise")
        return Comparison(na, nb, ma, mb, diff, None, None, None, None, f"{word}; not tested (one repetition)", "untested")
    va, vb = float(np.var(a, ddof=1)), float(np.var(b, ddof=1))
    if va == 0 and vb == 0:
        verdict = "no difference (every repetition equal)" if diff == 0 else f"{word} (every repetition equal, no spread to test)"
        return Comparison(na, nb, ma, mb, diff, diff, diff, None, None, verdict, "equal")
    t = sps.ttest_ind(b, a, equal_var=False)
    ci = t.confidence_interval(1 - ALPHA)
    mw = sps.mannwhitneyu(b, a, alternative="two-sided")
    lo, hi = 100 * ci.low / ma, 100 * ci.high / ma
    if lo <= 0 <= hi:
        verdict, outcome = f"within noise (Welch p = {t.pvalue:.2g})", "noise"
    else:
        verdict, outcome = f"{word}, significant (Welch p = {t.pvalue:.2g})", "significant"
    return Comparison(na, nb, ma, mb, diff, lo, hi, float(t.pvalue), float(mw.pvalue), verdict, outcome)


@dataclass(frozen=True)
class Anova:
    groups: int
    f: float | None
    p: float | None
    verdict: str


def anova(groups: dict[str, list[float]]) -> Anova:
    """One-way ANOVA across ``groups`` (each needs two or more values)."""
    usable = {k: v for k, v in groups.items() if len(v) >= 2}
    if len(usable) < 2:
        return Anova(len(usable), None, None, "not tested: needs two groups of two or more repetitions")
    if all(np.var(v) == 0 for v in usable.values()):
        same = len({v[0] for v in usable.values()}) == 1
        return Anova(len(usable), None, None, "no difference (every value equal)" if same else "differ, with no spread to test")
    r = sps.f_oneway(*usable.values())
    verdict = "differ significantly" if r.pvalue < ALPHA else "within noise: no significant difference"
    return Anova(len(usable), float(r.statistic), float(r.pvalue), f"{verdict} (p = {r.pvalue:.2g})")
