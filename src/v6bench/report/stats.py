"""The statistics of a report: descriptive statistics of a sample or of a
delay histogram, two-series comparisons with their verdicts, and one-way
ANOVA.

- :func:`describe`: n, min, max, mean, mode, standard deviation (n − 1),
  skewness and excess kurtosis (seed 003 Table 1; seed 000 §4 checks
  normality by |skewness|, |kurtosis| ≤ 2 before its ANOVA).
- :func:`compare`: B against A over repetitions, the unit being one value
  per repetition (a search's NDR, a trial's median latency). The effect is
  in % of A's centre, with a 95 % interval suited to the data: the
  difference of means with Welch's interval and t-test for roughly
  symmetric values (throughput, the search's resolution counted in the
  variance); for positive skewed ones (latency, reset times) the
  Hodges–Lehmann ratio (the median of all pairwise ratios B/A) with the
  interval from inverting the exact Mann–Whitney U test, which holds
  whatever their distribution (a lab whose delays sit at one of two levels
  included); the Hodges–Lehmann shift where values are not positive.
  Below :data:`MIN_REPETITIONS` a side: "not enough repetitions", never a
  verdict. Paired (``paired=True``: the i-th values of A and B come from
  one trial, both families in it): the unit is each trial's difference,
  or for skewed positive values the logarithm of its ratio B/A; the effect
  is their Hodges–Lehmann estimate (the median of the Walsh averages) with
  the interval from inverting the Wilcoxon signed-rank test; symmetric
  values by the mean difference and the paired t-test. Below
  :data:`MIN_PAIRS` pairs: "not enough repetitions".
- :func:`decide`: the verdicts of every comparison a report states,
  Benjamini–Hochberg-corrected (statsmodels) in two families, the report's
  comparisons and its A/A controls; "no difference detected" states the
  smallest difference the samples could have shown (t-test power,
  statsmodels).
- :func:`anova`: one-way ANOVA across groups (seed 000 Table 8, reset kinds).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace

import numpy as np
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import TTestIndPower, TTestPower

from ..core.repetitions import MIN_PAIRS, MIN_REPETITIONS  # noqa: F401 (views take them from here)


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
    """B against A (IPv6 against IPv4, or a network type against the
    first). ``estimator``: "mean" (difference of means, Welch interval and
    t-test) or "location" (Hodges–Lehmann ratio or shift, its
    distribution-free interval and the Mann–Whitney U test), chosen by the
    data's kind. ``diff_pct``, the interval and ``mde_pct`` are in % of A's
    centre (its mean, or its median for "location"). ``p`` is the test's
    own p-value; ``p_adjusted`` and the verdict come from :func:`decide`
    over every comparison of the same ``family`` in a report."""

    n_a: int
    n_b: int
    center_a: float | None
    center_b: float | None
    estimator: str
    diff_pct: float | None = None
    ci_low_pct: float | None = None
    ci_high_pct: float | None = None
    p: float | None = None
    #: The smallest difference [% of A] this comparison could have detected (power :data:`POWER`, α :data:`ALPHA`).
    mde_pct: float | None = None
    #: Values left out because the tester limited them or their delays are suspect (counted, never compared).
    excluded: int = 0
    higher: str = "higher"
    #: What B is called in the verdict ("IPv6", a network type).
    name_b: str = "IPv6"
    resolution_pct: float | None = None
    p_adjusted: float | None = None
    #: How it was compared, a key of :data:`METHODS` ("" when it was not).
    method: str = ""
    verdict: str = ""
    #: The verdict's kind, one of OUTCOMES (the summary counts by it).
    outcome: str = "other"
    #: The multiple-comparison family, a key of :data:`FAMILIES`.
    family: str = "report"
    #: The design, one of :data:`DESIGNS`.
    design: str = "unpaired"
    #: The effect for pooling across runs: (ln(B/A), its standard error, degrees of freedom), from the values
    #: (report/log_ratio.py); None where a run's comparison is not pooled.
    log_ratio: tuple[float, float, float] | None = None

    @property
    def paired(self) -> bool:
        return self.design == "paired"

    @property
    def test(self) -> str:
        return METHODS[self.method][1] if self.method else ""

    def row(self) -> tuple:
        return (self.design, self.n_a, self.center_a, self.n_b, self.center_b, self.excluded, self.estimator_name, self.diff_pct,
                self.ci_low_pct, self.ci_high_pct, self.test, self.p, self.p_adjusted, self.mde_pct, self.verdict)

    @property
    def estimator_name(self) -> str:
        return METHODS[self.method][0] if self.method else ""


#: How A and B were measured: in trials of their own; in the same trials (``n_a == n_b`` pairs, one a trial); or as
#: the ends of a mix regression over interleaved blocks (report/regression.py).
DESIGNS = ("unpaired", "paired", "mix regression")

#: A comparison's outcome: differs (significant after the multiple-comparison
#: correction), none (no difference detected, with the smallest detectable
#: one), few (fewer than MIN_REPETITIONS a side, or lab builds where scenarios
#: are compared), line (a throughput at the path's line rate: the link's, no
#: verdict on the DUT), other (not comparable).
OUTCOMES = ("differs", "none", "few", "line", "other")

#: The report's columns for :meth:`Comparison.row`.
COMPARISON_COLUMNS = ("design", "n A", "centre A", "n B", "centre B", "left out (tester-limited or suspect)", "effect", "B − A %",
                      "95 % CI low %", "95 % CI high %", "test", "p", "p (corrected)", "detectable ± %", "verdict")

#: The level of a report's verdicts (the false discovery rate each family of
#: comparisons is corrected to, :data:`CORRECTION`), and the power at which
#: the smallest detectable difference is stated.
ALPHA = 0.05
POWER = 0.8
#: The multiple-comparison correction (statsmodels' name, and the report's): the
#: false discovery rate over every comparison of a family at :data:`ALPHA`. When
#: no difference in it is real (an A/A run) that is also the chance of any false
#: "differs"; unlike Holm's family-wise control it keeps the power to find
#: many real differences at once, which rank tests at 5 a side could not
#: reach under Holm beyond six comparisons.
CORRECTION = ("fdr_bh", "Benjamini–Hochberg")

#: The families corrected apart, and how a verdict names each. The A/A
#: controls are their own: a control asks whether the procedure reports a
#: difference where none exists, and its answer must not depend on how many
#: real differences the rest of the report holds (in one family with R real
#: differences among m, Benjamini–Hochberg lets each null comparison through
#: at up to α·(R + 1)/m).
FAMILIES = {"report": "", "controls": " over the A/A controls"}


def ratio_pct(log_ratio: float) -> float:
    """A difference on the log scale, ln(B/A), as B − A in % of A."""
    return 100 * math.expm1(log_ratio)


def searched_variance(values, centre: float, resolution_pct: float | None) -> float:
    """The sample variance (n − 1) of a search's results with its quantisation added: a result is
    known to ``resolution_pct`` of its value only, a uniform error of variance (resolution × centre)² / 12."""
    q = (resolution_pct or 0) / 100
    return float(np.var(np.asarray(values, float), ddof=1)) + (q * centre) ** 2 / 12


def welch_df(se2a: float, na: int, se2b: float, nb: int) -> float:
    """The Welch–Satterthwaite degrees of freedom of a difference whose
    squared standard errors are ``se2a`` and ``se2b`` (samples of ``na`` and
    ``nb``; their sum must be positive)."""
    return (se2a + se2b) ** 2 / (se2a ** 2 / (na - 1) + se2b ** 2 / (nb - 1))


def _welch(ma: float, va: float, na: int, mb: float, vb: float, nb: int, alpha: float = ALPHA) -> tuple[float, float, float]:
    """Welch's test of mean B − mean A from the samples' means, variances
    (n − 1) and sizes: the difference's 95 % interval and the two-sided p
    (scipy's ``ttest_ind_from_stats``; the interval from the same standard
    error and Welch–Satterthwaite degrees of freedom)."""
    r = sps.ttest_ind_from_stats(mb, math.sqrt(vb), nb, ma, math.sqrt(va), na, equal_var=False)
    se2a, se2b = va / na, vb / nb
    se = math.sqrt(se2a + se2b)
    df = welch_df(se2a, na, se2b, nb)
    half = float(sps.t.ppf(1 - alpha / 2, df)) * se
    return mb - ma - half, mb - ma + half, float(r.pvalue)


def hodges_lehmann(a: list[float], b: list[float], alpha: float = ALPHA) -> tuple[float, float, float, float]:
    """The Hodges–Lehmann estimate of the shift B − A (the median of all
    pairwise differences), its 1 − α interval by inverting the two-sided
    Mann–Whitney U test (scipy's; exact for small samples without ties),
    and that test's p-value at shift 0. The interval is the set of shifts d
    for which B − d is not distinguishable from A: its ends are pairwise
    differences, as in Hollander & Wolfe §4.3 and R's ``wilcox.test``."""
    x, y = np.asarray(a, float), np.asarray(b, float)
    diffs = y[:, None] - x[None, :]
    est = float(np.median(diffs))
    lo, hi = _inverted(diffs.ravel(), est, lambda shift: sps.mannwhitneyu(y - shift, x, alternative="two-sided").pvalue,
                       alpha)
    return est, lo, hi, float(sps.mannwhitneyu(y, x, alternative="two-sided").pvalue)


def _inverted(points: np.ndarray, est: float, p_at, alpha: float = ALPHA) -> tuple[float, float]:
    """The 1 − α interval of a rank test inverted: the shifts s whose
    ``p_at(s)`` is at least α. The test's statistic changes only at
    ``points`` (pairwise differences, Walsh averages), so it is tried once
    between each two (``mids[i]`` lies between ``w[i-1]`` and ``w[i]``),
    searched outward from ``est``; the ends are points."""
    w = np.unique(points)
    mids = np.concatenate(([w[0] - 1], (w[:-1] + w[1:]) / 2, [w[-1] + 1]))

    def accepted(i: int) -> bool:
        return p_at(mids[i]) >= alpha

    centre = int(np.searchsorted(mids, est))
    lo_i, hi_i = _first(accepted, 0, centre), _last(accepted, centre - 1, len(mids) - 1)
    return (float(w[lo_i - 1]) if lo_i > 0 else -math.inf), (float(w[hi_i]) if hi_i < len(w) else math.inf)


def _first(ok, lo: int, hi: int) -> int:
    """The first i in [lo, hi] with ok(i), for ok false then true (hi if none)."""
    while lo < hi:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


def _last(ok, lo: int, hi: int) -> int:
    """The last i in [lo, hi] with ok(i), for ok true then false (lo if none)."""
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if ok(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def _mde(va: float, na: int, vb: float, nb: int) -> float:
    """The smallest difference of means the samples' sizes and variances
    could detect at :data:`POWER` and :data:`ALPHA` (two-sample t-test
    power, statsmodels, on the pooled standard deviation)."""
    sd = math.sqrt(((na - 1) * va + (nb - 1) * vb) / (na + nb - 2))
    if sd == 0:
        return 0.0
    return _detectable_d(na, nb) * sd


@functools.lru_cache(maxsize=256)
def _detectable_d(na: int, nb: int) -> float:
    """The standardized difference (Cohen's d) detectable at the sizes (statsmodels' solver, cached: it iterates)."""
    return float(TTestIndPower().solve_power(effect_size=None, nobs1=na, alpha=ALPHA, power=POWER, ratio=nb / na))


def _flat(x: np.ndarray) -> bool:
    """No spread, but for floating-point noise (a rate computed twice)."""
    return float(np.ptp(x)) <= 1e-9 * max(abs(float(np.mean(x))), 1e-300)


#: How each comparison was made (:attr:`Comparison.method`): the effect, and the test and interval.
METHODS = {
    "welch": ("difference of means", "Welch t"),
    "log-hodges-lehmann": ("Hodges–Lehmann ratio", "Mann–Whitney U"),
    "hodges-lehmann": ("Hodges–Lehmann shift", "Mann–Whitney U"),
    # Paired: one difference (or log ratio) per trial.
    "log-signed-rank": ("Hodges–Lehmann ratio, paired", "Wilcoxon signed-rank"),
    "signed-rank": ("Hodges–Lehmann shift, paired", "Wilcoxon signed-rank"),
    "paired-t": ("mean difference, paired", "paired t"),
    # Trials at several IPv6 shares in repetition blocks: the slope over the share (report/regression.py).
    "mix-regression": ("slope over the IPv6 share, blocks", "t on the slope (OLS)"),
    # Below MIN_REPETITIONS a side (MIN_PAIRS pairs): the centres' difference, and no test.
    "means": ("difference of means", ""),
    "medians": ("difference of medians", ""),
    "slope": ("slope over the IPv6 share, blocks", ""),
}


def compare(a: list[float], b: list[float], estimator: str = "mean", higher: str = "higher",
            resolution_pct: float | None = None, excluded: int = 0, name_b: str = "IPv6",
            family: str = "report", paired: bool = False, alpha: float = ALPHA) -> Comparison:
    """B against A, before the correction (:func:`decide` gives the verdict).

    ``estimator``: "mean" for roughly symmetric values (repeated searches'
    throughput): the difference of means, Welch's interval and t-test; a
    search's result is known to its resolution only, so ``resolution_pct``
    adds its quantisation, (resolution × value)² / 12, to each side's
    variance (and no difference within it is claimed). "location" for
    positive, right-skewed values (per-trial median latency, reset times):
    the Hodges–Lehmann ratio (a multiplicative effect, as delays vary) with
    the Mann–Whitney test and its interval, on the logarithms; where a
    value is 0 or negative, the Hodges–Lehmann shift. The rank test is
    exact under the run's randomized order whatever the values'
    distribution; Welch's test on the logarithms, used before, assumes
    roughly normal logarithms and on a lab whose per-trial medians sit at
    one of two levels gave very small p too often (docs/report.md).
    ``higher`` names what a larger value means; ``family``: a key of
    :data:`FAMILIES`; ``paired``: ``a[i]`` and ``b[i]`` come from one
    trial (:func:`compare_paired`); ``alpha``: the interval's level is
    1 − alpha (a sequential design's look, report/sequential.py)."""
    if estimator not in ("mean", "location"):
        raise ValueError(f"estimator {estimator!r}")
    if family not in FAMILIES:
        raise ValueError(f"family {family!r}")
    if paired:
        return compare_paired(a, b, estimator, higher, excluded, name_b, family, alpha)
    na, nb = len(a), len(b)
    base = Comparison(na, nb, None, None, estimator, higher=higher, resolution_pct=resolution_pct, excluded=excluded,
                      name_b=name_b, family=family)
    if not na or not nb:
        return replace(base, verdict="not measured for both")
    x, y = np.asarray(a, float), np.asarray(b, float)
    logs = estimator == "location" and bool((x > 0).all() and (y > 0).all())
    method = "welch" if estimator == "mean" else "log-hodges-lehmann" if logs else "hodges-lehmann"
    if method == "welch":
        ca, cb = float(np.mean(x)), float(np.mean(y))
    else:
        ca, cb = float(np.median(x)), float(np.median(y))
    base = replace(base, center_a=ca, center_b=cb, method=method)
    if ca == 0:
        return replace(base, verdict="A's centre is 0: no percentage")
    if na < MIN_REPETITIONS or nb < MIN_REPETITIONS:
        return replace(base, diff_pct=100 * (cb - ca) / abs(ca), outcome="few",
                       method="means" if method == "welch" else "medians",
                       verdict=f"not enough repetitions ({na} and {nb}; a verdict needs {MIN_REPETITIONS} a side)")
    pct = 100 / abs(ca)
    if method == "welch":
        return _means(base, a, b, resolution_pct, alpha)
    if _flat(x) and _flat(y) and math.isclose(ca, cb, rel_tol=1e-9):
        return replace(base, diff_pct=0.0, ci_low_pct=0.0, ci_high_pct=0.0, p=1.0, mde_pct=0.0)
    if method == "log-hodges-lehmann":
        return _ranks(base, np.log(x), np.log(y), ratio_pct, method, alpha)
    return _ranks(base, a, b, lambda d: d * pct, alpha=alpha)


def _means(base: Comparison, a: list[float], b: list[float], resolution_pct: float | None,
           alpha: float = ALPHA) -> Comparison:
    """:func:`compare`'s difference of means: Welch's interval and t-test, each side's variance with a
    search's quantisation, (resolution × value)² / 12, added; equal values every time are equal to the
    resolution; no spread and no resolution leaves the ranks."""
    x, y = np.asarray(a, float), np.asarray(b, float)
    ca, cb, na, nb = base.center_a, base.center_b, len(a), len(b)
    pct = 100 / abs(ca)
    va, vb = searched_variance(x, ca, resolution_pct), searched_variance(y, cb, resolution_pct)
    if _flat(x) and _flat(y) and math.isclose(ca, cb, rel_tol=1e-9):  # equal every time: to the resolution
        return replace(base, diff_pct=0.0, ci_low_pct=0.0, ci_high_pct=0.0, p=1.0, mde_pct=_mde(va, na, vb, nb) * pct)
    if va + vb == 0:  # no spread and no resolution: the ranks are all there is
        return _ranks(base, a, b, lambda d: d * pct, alpha=alpha)
    lo, hi, p = _welch(ca, va, na, cb, vb, nb, alpha)
    return replace(base, diff_pct=(cb - ca) * pct, ci_low_pct=lo * pct, ci_high_pct=hi * pct, p=p,
                   mde_pct=_mde(va, na, vb, nb) * pct)


def _ranks(base: Comparison, a, b, to_pct, method: str = "hodges-lehmann", alpha: float = ALPHA) -> Comparison:
    """The rank-based comparison: Hodges–Lehmann shift, its Mann–Whitney
    interval and test; the detectable difference from the t-test's power
    divided by the square root of the Mann–Whitney test's efficiency at
    the normal (3/π). ``to_pct``: a shift on the values' scale in % of
    A's centre (on logarithms, e^d − 1: a ratio)."""
    effect, lo, hi, p = hodges_lehmann(list(a), list(b), alpha)
    va, vb = float(np.var(a, ddof=1)), float(np.var(b, ddof=1))
    mde = _mde(va, len(a), vb, len(b)) / math.sqrt(3 / math.pi)
    return replace(base, method=method, diff_pct=to_pct(effect), ci_low_pct=to_pct(lo), ci_high_pct=to_pct(hi), p=p,
                   mde_pct=to_pct(mde))


#: scipy's ``wilcoxon`` (method "auto") enumerates the 2ⁿ sign flips by a permutation test where the
#: differences have ties or zeros and are this many or fewer; more, it takes the normal approximation.
WILCOXON_PERMUTED_N = 13


def wilcoxon_p(d: np.ndarray) -> float:
    """The two-sided Wilcoxon signed-rank p-value of ``d`` as scipy's
    ``wilcoxon(d)`` gives it (zeros dropped, mid-ranks for ties). Where
    scipy runs its permutation test (ties or zeros, n ≤
    :data:`WILCOXON_PERMUTED_N`: every one of the 2ⁿ sign flips, about a
    second), the same null distribution is counted exactly here: the sum of
    the doubled ranks of the positive values, each sign equally likely, by
    convolution (the same counts over 2ⁿ, so the same p to the last bit;
    ``tests/unit/test_stats.py`` compares them)."""
    x = np.asarray(d, float)
    nonzero = x[x != 0]
    ranks = sps.rankdata(np.abs(nonzero))
    tied = len(np.unique(ranks)) < len(ranks)
    if len(x) > WILCOXON_PERMUTED_N or not (tied or len(nonzero) < len(x)) or len(nonzero) == 0:
        return float(sps.wilcoxon(x).pvalue)
    doubled = np.rint(2 * ranks).astype(np.int64)
    counts = np.zeros(int(doubled.sum()) + 1, np.int64)
    counts[0] = 1
    for r in doubled:
        counts[r:] = counts[r:] + counts[:len(counts) - r]
    observed = int(doubled[nonzero > 0].sum())
    total = float(2 ** len(nonzero))
    less, greater = counts[:observed + 1].sum() / total, counts[observed:].sum() / total
    return float(min(1.0, 2 * min(less, greater)))


def signed_rank_hodges_lehmann(d: list[float], alpha: float = ALPHA) -> tuple[float, float, float, float]:
    """The Hodges–Lehmann estimate of the centre of the paired differences
    ``d`` (the median of their Walsh averages (dᵢ + dⱼ)/2, i ≤ j), its
    1 − α interval by inverting the two-sided Wilcoxon signed-rank test
    (scipy's ``wilcoxon``, :func:`wilcoxon_p`; exact for small samples),
    and that test's p-value at 0. The interval is the set of shifts s for
    which d − s is compatible with a centre of 0; its ends are Walsh
    averages, as in Hollander & Wolfe §3.3 and R's ``wilcox.test(paired =
    TRUE, conf.int = TRUE)``."""
    x = np.asarray(d, float)
    i, j = np.triu_indices(len(x))
    walsh = (x[i] + x[j]) / 2
    est = float(np.median(walsh))
    lo, hi = _inverted(walsh, est, lambda shift: wilcoxon_p(x - shift), alpha)
    p = 1.0 if not x.any() else wilcoxon_p(x)
    return est, lo, hi, p


@functools.lru_cache(maxsize=256)
def _detectable_d_paired(n: int) -> float:
    """The standardized mean difference detectable with ``n`` pairs (one-sample t-test power, statsmodels)."""
    return float(TTestPower().solve_power(effect_size=None, nobs=n, alpha=ALPHA, power=POWER))


def compare_paired(a: list[float], b: list[float], estimator: str = "location", higher: str = "higher",
                   excluded: int = 0, name_b: str = "IPv6", family: str = "report", alpha: float = ALPHA) -> Comparison:
    """B against A where ``a[i]`` and ``b[i]`` were measured in the same
    trial (both families interleaved in it, or a scenario's flows beside
    its control's): whatever moved the trial (the lab's delay level, a
    host stall, the DUT's state) moved both, and the unit is the trial's
    own difference. "location" (positive, skewed values: per-trial median
    delays): the logarithms of the ratios bᵢ/aᵢ, their Hodges–Lehmann
    estimate and Wilcoxon signed-rank interval and test
    (:func:`signed_rank_hodges_lehmann`), the effect e^d − 1 (the shift of
    the differences where a value is not positive); "mean": the mean
    difference, its t interval and the paired t-test. Below
    :data:`MIN_PAIRS` pairs: "not enough repetitions" (with 5 the
    signed-rank test cannot go below p = 2/32). Centres are each side's
    median (mean for "mean"); effects in % of A's. The detectable
    difference: the paired t-test's power on the differences' spread,
    divided by √(3/π) for the rank test (its efficiency at the normal)."""
    if len(a) != len(b):
        raise ValueError(f"paired samples of different sizes ({len(a)} and {len(b)})")
    n = len(a)
    base = Comparison(n, n, None, None, estimator, higher=higher, excluded=excluded, name_b=name_b, family=family,
                      design="paired")
    if not n:
        return replace(base, verdict="not measured for both")
    x, y = np.asarray(a, float), np.asarray(b, float)
    logs = estimator == "location" and bool((x > 0).all() and (y > 0).all())
    method = "paired-t" if estimator == "mean" else "log-signed-rank" if logs else "signed-rank"
    centre = np.mean if method == "paired-t" else np.median
    ca, cb = float(centre(x)), float(centre(y))
    base = replace(base, center_a=ca, center_b=cb, method=method)
    if ca == 0:
        return replace(base, verdict="A's centre is 0: no percentage")
    pct = 100 / abs(ca)
    d = np.log(y / x) if logs else y - x
    to_pct = ratio_pct if logs else (lambda v: v * pct)
    if n < MIN_PAIRS:
        return replace(base, diff_pct=to_pct(float(np.median(d))), outcome="few",
                       method="means" if method == "paired-t" else "medians",
                       verdict=f"not enough repetitions ({n} pairs; a paired verdict needs {MIN_PAIRS})")
    sd = float(np.std(d, ddof=1))
    if _flat(d) and abs(float(d[0])) <= 1e-12 * max(float(np.max(np.abs(x))), 1e-300):  # equal in every trial
        return replace(base, diff_pct=0.0, ci_low_pct=0.0, ci_high_pct=0.0, p=1.0, mde_pct=0.0)
    if method == "paired-t":
        if sd == 0:  # the same difference in every trial: only the signs are information
            method = "signed-rank"
        else:
            # The one-sample t-test of the differences and its interval (scipy's ttest_1samp, written out: a
            # sequential design computes it at every look, report/sequential.py).
            m, se = float(np.mean(d)), sd / math.sqrt(n)
            half = float(sps.t.ppf(1 - alpha / 2, n - 1)) * se
            return replace(base, diff_pct=m * pct, ci_low_pct=(m - half) * pct, ci_high_pct=(m + half) * pct,
                           p=float(2 * sps.t.sf(abs(m) / se, n - 1)), mde_pct=_detectable_d_paired(n) * sd * pct)
    effect, lo, hi, p = signed_rank_hodges_lehmann(list(d), alpha)
    mde = _detectable_d_paired(n) * sd / math.sqrt(3 / math.pi)
    return replace(base, method=method, diff_pct=to_pct(effect), ci_low_pct=to_pct(lo), ci_high_pct=to_pct(hi), p=p,
                   mde_pct=to_pct(mde))


def line_limited(a: list[float], b: list[float], at_line: dict[str, int], name_a: str, higher: str = "higher",
                 excluded: int = 0, name_b: str = "IPv6", family: str = "report") -> Comparison:
    """A throughput comparison in which a search passed at the path's line
    rate (``at_line``: how many values of each series did): that value is
    the link's, so the comparison says so and draws no verdict on the DUT
    (no test, left out of the correction), whatever the other series holds
    (docs/report.md, "Line-limited results"). Centres are the means."""
    where = ", ".join(f"{name} {at_line[name]} of {n}" for name, n in ((name_a, len(a)), (name_b, len(b)))
                      if at_line.get(name))
    return Comparison(len(a), len(b), float(np.mean(a)) if a else None, float(np.mean(b)) if b else None, "mean",
                      higher=higher, excluded=excluded, name_b=name_b, family=family, outcome="line",
                      verdict=f"line-limited ({where} at the path's line rate): the link's throughput, "
                              "no verdict on the router")


def decide(comparisons: list[Comparison]) -> list[Comparison]:
    """Every comparison a report states, corrected together within its
    family (:data:`FAMILIES`; :data:`CORRECTION`, statsmodels
    ``multipletests``, at :data:`ALPHA`), with its verdict: "differs" only
    with enough repetitions, an adjusted p below α and a difference beyond
    the procedure's resolution; otherwise "no difference detected" with the
    smallest difference that could have been."""
    adjusted: dict[int, float] = {}
    for family in FAMILIES:
        tested = [i for i, c in enumerate(comparisons) if c.p is not None and c.family == family]
        if tested:
            ps = multipletests([comparisons[i].p for i in tested], alpha=ALPHA, method=CORRECTION[0])[1]
            adjusted.update(zip(tested, map(float, ps)))
    out = []
    for i, c in enumerate(comparisons):
        if c.p is None:
            out.append(c if c.verdict else replace(c, verdict="not comparable"))
            continue
        q = adjusted[i]
        lower = "lower" if c.higher == "higher" else {"slower": "faster", "more": "less"}.get(c.higher, f"not {c.higher}")
        word = f"{abs(c.diff_pct):.1f} % {c.higher if c.diff_pct > 0 else lower}"
        seen = f"could have detected ±{c.mde_pct:.3g} %" if c.mde_pct is not None else ""
        bh = f"{CORRECTION[1]}{FAMILIES[c.family]} p = {q:.2g}"
        if q >= ALPHA:
            verdict, outcome = f"no difference detected ({bh}; {seen})", "none"
        elif c.resolution_pct is not None and abs(c.diff_pct) <= c.resolution_pct:
            verdict, outcome = f"no difference beyond the search's {c.resolution_pct:g} % resolution ({bh})", "none"
        else:
            verdict, outcome = f"{c.name_b} {word}, differs ({bh})", "differs"
        out.append(replace(c, p_adjusted=q, verdict=verdict, outcome=outcome))
    return out


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
