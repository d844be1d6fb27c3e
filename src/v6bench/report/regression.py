"""IPv6's extra cost per frame from a mix design (seed 002): trials at
several IPv6 shares (100/0, 75/25, 50/50, 25/75, 0/100 by default)
interleaved in repetition blocks, each trial's value (the DUT's CPU time
per forwarded frame) fitted as

    value = block_k + b × IPv6 share

by ordinary least squares (statsmodels) with one level per block, so that
whatever moved a whole block (the lab rebuilt, the machine's state) cancels
as the paired design cancels it within a trial. ``b`` is what a frame
costs more as IPv6 than as IPv4 (share 1 against share 0), its interval
and test the t on the slope; with two shares, 0 and 1, it is the paired
t-test across blocks. The effect is in % of IPv4's fitted value (the mean
over blocks at share 0), taken as known in the run's own interval (its
error is that of a mean over every trial, small beside the slope's);
pooled across runs, its variance counts (report/log_ratio.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import statsmodels.api as sm
from scipy import stats as sps

from ..core.repetitions import MIN_PAIRS
from . import log_ratio
from .stats import ALPHA, POWER, Comparison


@dataclass(frozen=True)
class Slope:
    """A fitted slope: estimate, standard error, 1 − α interval, two-sided
    p at 0, residual degrees of freedom, and the fitted value at share 0
    averaged over the blocks."""

    slope: float
    se: float
    ci_low: float
    ci_high: float
    p: float
    df: int
    at_zero: float
    #: The variance of ``at_zero`` and its covariance with the slope (report/log_ratio.py's delta method).
    var_at_zero: float = math.nan
    cov_at_zero_slope: float = math.nan


def blocked_slope(observations: list[tuple[int, float, float]]) -> Slope:
    """OLS of ``value`` on ``share`` with one level per block (no common
    intercept: the blocks' levels are it). With one block this is the
    simple linear regression; with two shares per block, the paired t."""
    blocks = sorted({o[0] for o in observations})
    share = np.array([o[1] for o in observations], float)
    y = np.array([o[2] for o in observations], float)
    x = np.column_stack([share] + [[1.0 if o[0] == k else 0.0 for o in observations] for k in blocks])
    # The value at share 0 averaged over the blocks is the blocks' levels weighted by their trials:
    # a linear combination of the parameters, whose variance and covariance with the slope follow.
    weights = np.array([0.0] + [sum(o[0] == k for o in observations) / len(y) for k in blocks])
    if len(y) <= x.shape[1]:  # no residual: the slope, and nothing of its error
        params = np.linalg.lstsq(x, y, rcond=None)[0]
        return Slope(float(params[0]), math.nan, math.nan, math.nan, 1.0, 0, float(weights @ params))
    fit = sm.OLS(y, x).fit()
    slope, se = float(fit.params[0]), float(fit.bse[0])
    lo, hi = (float(v) for v in fit.conf_int(ALPHA)[0])
    p = float(fit.pvalues[0]) if se > 0 else (1.0 if slope == 0 else 0.0)
    cov = np.asarray(fit.cov_params())
    return Slope(slope, se, lo, hi, 1.0 if math.isnan(p) else p, int(fit.df_resid), float(weights @ fit.params),
                 float(weights @ cov @ weights), float(weights @ cov[:, 0]))


def mix_slope(observations: list[tuple[int, float, float]], higher: str = "more", excluded: int = 0,
              name_b: str = "IPv6", family: str = "report") -> Comparison:
    """The slope of ``(block, ipv6_share, value)`` observations over the
    share within blocks (:func:`blocked_slope`). Blocks that ran a single
    share tell nothing of the slope and are left out. Below
    :data:`MIN_PAIRS` blocks: "not enough repetitions". ``n A`` and ``n B``
    are the trials fitted; centres are the fitted values at share 0 and 1;
    the detectable difference is the slope's standard error ×
    (t₁₋α/₂ + t_power) at the residual degrees of freedom."""
    shares_of: dict[int, set[float]] = {}
    for block, share, _ in observations:
        shares_of.setdefault(block, set()).add(share)
    blocks = [k for k, s in shares_of.items() if len(s) > 1]
    used = [o for o in observations if o[0] in blocks]
    base = Comparison(len(used), len(used), None, None, "mean", higher=higher, excluded=excluded, name_b=name_b,
                      family=family, design="mix regression", method="mix-regression")
    if not blocks:
        return replace(base, method="", verdict="not measured at two IPv6 shares in one block")
    fit = blocked_slope(used)
    a = fit.at_zero
    base = replace(base, center_a=a, center_b=a + fit.slope)
    if a == 0:
        return replace(base, verdict="A's centre is 0: no percentage")
    pct = 100 / abs(a)
    if len(blocks) < MIN_PAIRS or fit.df < 1:
        return replace(base, method="slope", diff_pct=fit.slope * pct, outcome="few",
                       verdict=f"not enough repetitions ({len(blocks)} blocks; a mix regression needs {MIN_PAIRS})")
    mde = fit.se * float(sps.t.ppf(1 - ALPHA / 2, fit.df) + sps.t.ppf(POWER, fit.df))
    lr = log_ratio.of_slope(a, fit.slope, fit.var_at_zero, fit.se ** 2, fit.cov_at_zero_slope, fit.df)
    return replace(base, diff_pct=fit.slope * pct, ci_low_pct=fit.ci_low * pct, ci_high_pct=fit.ci_high * pct,
                   p=fit.p, mde_pct=mde * pct, log_ratio=(lr.y, lr.se, lr.df) if lr else None)
