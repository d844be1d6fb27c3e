"""A run's effect as pooling across runs needs it: ``ln(B/A)`` with its
own standard error and degrees of freedom, computed from the run's values
(report/across.py, report/nested.py).

A run's report states B − A in % of A's centre with an interval from a t
distribution or from ranks; read back from the interval's width with a
normal quantile, its variance would be too large for few repetitions and
would take A's centre for known. Here each comparison's effect is
recomputed on the log scale from the same values, by its design:

- **unpaired means** (repeated searches): ``ln(mean B / mean A)``, its
  variance by the delta method, ``var A / (n_A·mean A²) + var B / (n_B·mean
  B²)`` (each side's variance with a search's quantisation added, as
  report/stats.py adds it), so A's own variance counts; Welch–Satterthwaite
  degrees of freedom;
- **unpaired skewed values** (per-trial median delays, positive):
  the difference of mean logarithms, Welch's standard error and degrees
  of freedom on the logarithms (the ratio of geometric means);
- **paired skewed values**: the mean of the trials' ``ln(bᵢ/aᵢ)``, its
  standard error ``s/√n`` on n − 1 degrees of freedom;
- **paired means**: ``ln(mean B / mean A)`` by the delta method with the
  pairs' covariance, on n − 1;
- **a mix regression** (:func:`of_slope`): ``ln((a + b)/a)`` from the
  fitted value at share 0 (``a``) and the slope (``b``), the delta method
  with both their variances and their covariance, on the fit's residual
  degrees of freedom.

A centre that is not positive has no log ratio: None, and the run is
shown, not pooled.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .stats import searched_variance, welch_df


@dataclass(frozen=True)
class LogRatio:
    """``y = ln(B/A)``, its standard error and degrees of freedom."""

    y: float
    se: float
    df: float


def _checked(y: float, var: float, df: float) -> LogRatio | None:
    if not (math.isfinite(y) and math.isfinite(var) and var > 0 and df >= 1):
        return None
    return LogRatio(y, math.sqrt(var), df)


def of_samples(a: list[float], b: list[float], estimator: str, paired: bool,
               resolution_pct: float | None = None) -> LogRatio | None:
    """B against A by the comparison's design (module docstring): ``estimator``
    "mean" or "location" as report/stats.py's :func:`..stats.compare`;
    ``paired``: ``a[i]`` and ``b[i]`` from one trial."""
    x, z = np.asarray(a, float), np.asarray(b, float)
    if len(x) < 2 or len(z) < 2 or (paired and len(x) != len(z)):
        return None
    logs = estimator == "location" and bool((x > 0).all() and (z > 0).all())
    if paired:
        n = len(x)
        if logs:
            d = np.log(z / x)
            return _checked(float(np.mean(d)), float(np.var(d, ddof=1)) / n, n - 1)
        mx, mz = float(np.mean(x)), float(np.mean(z))
        if mx <= 0 or mz <= 0:
            return None
        cov = np.cov(x, z, ddof=1)
        var = (cov[1, 1] / mz ** 2 + cov[0, 0] / mx ** 2 - 2 * cov[0, 1] / (mx * mz)) / n
        return _checked(math.log(mz / mx), float(var), n - 1)
    na, nb = len(x), len(z)
    if logs:
        la, lb = np.log(x), np.log(z)
        ta, tb = float(np.var(la, ddof=1)) / na, float(np.var(lb, ddof=1)) / nb
        return _checked(float(np.mean(lb) - np.mean(la)), ta + tb, welch_df(ta, na, tb, nb) if ta + tb > 0 else 0)
    ma, mb = float(np.mean(x)), float(np.mean(z))
    if ma <= 0 or mb <= 0:
        return None
    ta = searched_variance(x, ma, resolution_pct) / (na * ma ** 2)
    tb = searched_variance(z, mb, resolution_pct) / (nb * mb ** 2)
    return _checked(math.log(mb / ma), ta + tb, welch_df(ta, na, tb, nb) if ta + tb > 0 else 0)


def of_slope(at_zero: float, slope: float, var_at_zero: float, var_slope: float, cov: float,
             df: float) -> LogRatio | None:
    """A mix regression's ``ln((a + b)/a)``, ``a`` the fitted value at share 0
    and ``b`` the slope, with their variances and covariance (delta method)."""
    a, s = at_zero, at_zero + slope
    if a <= 0 or s <= 0:
        return None
    ga, gb = 1 / s - 1 / a, 1 / s
    return _checked(math.log(s / a), ga * ga * var_at_zero + gb * gb * var_slope + 2 * ga * gb * cov, df)
