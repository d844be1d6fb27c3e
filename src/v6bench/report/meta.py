"""Random-effects meta-analysis: one effect measured by several runs (on
several machines), pooled, with how much the runs disagree.

Each run gives an estimate ``y`` and its sampling variance ``v``. The model
(DerSimonian & Laird 1986; Viechtbauer 2005): ``yᵢ = xᵢβ + uᵢ + eᵢ``,
``eᵢ ~ N(0, vᵢ)`` within the run, ``uᵢ ~ N(0, τ²)`` between runs (the
machines' and labs' own differences).

- τ² by restricted maximum likelihood (REML; Viechtbauer 2005 §2.4,
  metafor's default), maximized over τ² ≥ 0 by scipy;
- the pooled estimate β by weighted least squares with weights
  1/(vᵢ + τ²), and its interval by Hartung & Knapp (2001) / Sidik &
  Jonkman (2002): the variance scaled by the weighted residual mean square
  (never below 1: Röver, Knapp & Friede 2015's modification, without which
  two runs that happen to agree give an interval narrower than either
  run's) and a t distribution with k − p degrees of freedom (wide with few
  runs: two runs give t(1), as they should);
- heterogeneity: Cochran's Q (fixed-effect weights 1/vᵢ) and its χ²(k − p)
  p-value, τ, and I² = τ² / (τ² + s²) with s² the typical within-run
  variance (Higgins & Thompson 2002, eq. 9; as metafor reports it for
  REML);
- a moderator (a run attribute such as the machine) as further columns of
  ``X`` (a mixed-effects meta-regression): its coefficients, the omnibus
  test of them (F(m, k − p) under Hartung–Knapp) and the share of τ² it
  explains (R² = (τ²₀ − τ²)/τ²₀).

Checked against metafor's published fits of the BCG vaccine trials
(``dat.bcg``, log risk ratios): REML τ² 0.3132, pooled −0.7145, Q 152.23,
I² 92.22 %; with absolute latitude as moderator τ² 0.0764, intercept
0.2515, slope −0.0291 (tests/unit/test_meta.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize
from scipy import stats as sps

from .stats import ALPHA


@dataclass(frozen=True)
class Fit:
    """A random-effects fit. ``beta[0]`` is the pooled estimate (or, with
    moderators, the intercept: the first level's); ``beta_ci`` each
    coefficient's 1 − α interval (Hartung–Knapp)."""

    k: int
    beta: tuple[float, ...]
    se: tuple[float, ...]
    beta_ci: tuple[tuple[float, float], ...]
    p: tuple[float, ...]
    tau2: float
    q: float
    q_df: int
    q_p: float | None
    i2_pct: float | None
    #: The omnibus test of the moderators (F under Hartung–Knapp) and its p; None without moderators.
    moderator_f: float | None = None
    moderator_p: float | None = None

    @property
    def tau(self) -> float:
        return math.sqrt(self.tau2)


def _wls(y: np.ndarray, v: np.ndarray, x: np.ndarray, tau2: float):
    w = 1.0 / (v + tau2)
    xtwx = x.T @ (w[:, None] * x)
    inv = np.linalg.inv(xtwx)
    beta = inv @ (x.T @ (w * y))
    resid = y - x @ beta
    return beta, inv, xtwx, resid, w


def _neg_restricted_loglik(tau2: float, y: np.ndarray, v: np.ndarray, x: np.ndarray) -> float:
    """−(restricted log-likelihood) at τ² (constants dropped; Viechtbauer 2005, eq. 9)."""
    _, _, xtwx, resid, w = _wls(y, v, x, tau2)
    sign, logdet = np.linalg.slogdet(xtwx)
    return 0.5 * (float(np.sum(np.log(v + tau2))) + float(logdet) + float(np.sum(w * resid ** 2)))


def reml_tau2(y: np.ndarray, v: np.ndarray, x: np.ndarray) -> float:
    """τ² maximizing the restricted likelihood over [0, ∞) (0 when no heterogeneity is left)."""
    k, p = x.shape
    if k - p < 1:
        return 0.0
    top = 10.0 * (float(np.var(y)) + float(np.max(v))) + 1e-12
    r = optimize.minimize_scalar(_neg_restricted_loglik, bounds=(0.0, top), args=(y, v, x), method="bounded",
                                 options={"xatol": 1e-12 * max(top, 1e-300) + 1e-14, "maxiter": 500})
    best = float(r.x)
    # The bounded search does not evaluate the end itself: τ² = 0 is a common maximum.
    if _neg_restricted_loglik(0.0, y, v, x) <= _neg_restricted_loglik(best, y, v, x):
        return 0.0
    return best


def fit(y: list[float], v: list[float], moderators: np.ndarray | None = None) -> Fit:
    """The random-effects (mixed-effects with ``moderators``: a k × m
    matrix, an intercept added) fit of estimates ``y`` with sampling
    variances ``v`` (module docstring). Needs k ≥ 2 estimates and more
    estimates than coefficients."""
    yy, vv = np.asarray(y, float), np.asarray(v, float)
    k = len(yy)
    x = np.ones((k, 1)) if moderators is None else np.column_stack([np.ones(k), np.asarray(moderators, float)])
    p = x.shape[1]
    if k < 2 or k <= p:
        raise ValueError(f"{k} estimates cannot fit {p} coefficients and a heterogeneity")
    if np.any(vv <= 0):
        raise ValueError("every sampling variance must be positive")
    # Heterogeneity left by the fixed-effect model.
    _, _, _, resid_fe, w_fe = _wls(yy, vv, x, 0.0)
    q = float(np.sum(w_fe * resid_fe ** 2))
    df = k - p
    q_p = float(sps.chi2.sf(q, df)) if df > 0 else None
    tau2 = reml_tau2(yy, vv, x)
    beta, inv, _, resid, w = _wls(yy, vv, x, tau2)
    # Hartung–Knapp, with the ad hoc modification: the scale never below 1, so that
    # runs that happen to agree closely never give a narrower interval than the
    # model itself (Röver, Knapp & Friede 2015; metafor's test="adhoc").
    scale = max(1.0, float(np.sum(w * resid ** 2)) / df)
    cov = scale * inv
    se = np.sqrt(np.diag(cov))
    t = float(sps.t.ppf(1 - ALPHA / 2, df))
    pvals = tuple(float(2 * sps.t.sf(abs(b / s), df)) if s > 0 else (1.0 if b == 0 else 0.0) for b, s in zip(beta, se))
    # I² with the typical within-run variance (Higgins & Thompson 2002, eq. 9), for the model with intercept only.
    w0 = 1.0 / vv
    s2 = (k - 1) * float(np.sum(w0)) / (float(np.sum(w0)) ** 2 - float(np.sum(w0 ** 2)))
    i2 = 100.0 * tau2 / (tau2 + s2) if moderators is None else None
    mf = mp = None
    if p > 1:
        b, c = beta[1:], cov[1:, 1:]
        try:
            mf = float(b @ np.linalg.solve(c, b)) / (p - 1)
            mp = float(sps.f.sf(mf, p - 1, df))
        except np.linalg.LinAlgError:
            mf = mp = None
    return Fit(k, tuple(map(float, beta)), tuple(map(float, se)),
               tuple((float(b - t * s), float(b + t * s)) for b, s in zip(beta, se)), pvals, tau2, q, df, q_p, i2, mf, mp)


def dummies(levels: list[str]) -> tuple[np.ndarray, tuple[str, ...]]:
    """A categorical moderator as 0/1 columns, the first level (in order of
    appearance) the reference; returns (k × (L − 1) matrix, the levels)."""
    order = tuple(dict.fromkeys(levels))
    m = np.array([[1.0 if lv == other else 0.0 for other in order[1:]] for lv in levels]).reshape(len(levels), len(order) - 1)
    return m, order


def q_power(v: list[float], tau2: float, alpha: float = ALPHA) -> float:
    """The power of Cochran's Q test (χ²(k − 1) at ``alpha``) to see a
    between-run variance ``tau2`` among runs with sampling variances ``v``:
    Q's mean and variance under τ² (Biggerstaff & Tweedie 1997, eqs. 5–6,
    with weights ``w = 1/v`` and ``S_r = Σ wʳ``), ``E = (k − 1) + τ²(S₁ −
    S₂/S₁)``, ``Var = 2(k − 1) + 4τ²(S₁ − 2S₂/S₁ + S₃/S₁²) + 2τ⁴(S₂ −
    2S₃/S₁ + S₂²/S₁²)``, matched by a gamma distribution (exact χ² at τ² = 0)."""
    w = 1.0 / np.asarray(v, float)
    k = len(w)
    s1, s2, s3 = float(np.sum(w)), float(np.sum(w ** 2)), float(np.sum(w ** 3))
    mean = (k - 1) + tau2 * (s1 - s2 / s1)
    var = 2 * (k - 1) + 4 * tau2 * (s1 - 2 * s2 / s1 + s3 / s1 ** 2) + 2 * tau2 ** 2 * (s2 - 2 * s3 / s1 + s2 ** 2 / s1 ** 2)
    crit = float(sps.chi2.ppf(1 - alpha, k - 1))
    return float(sps.gamma.sf(crit, mean * mean / var, scale=var / mean))


def detectable_tau(v: list[float], power: float, alpha: float = ALPHA) -> float:
    """The smallest between-run standard deviation τ that Cochran's Q test
    over runs with sampling variances ``v`` sees with ``power``
    (:func:`q_power`); needs two runs or more."""
    if len(v) < 2:
        raise ValueError("a heterogeneity test needs two runs or more")
    top = 1.0
    while q_power(v, top * top, alpha) < power:
        top *= 4.0
    return float(optimize.brentq(lambda t: q_power(v, t * t, alpha) - power, 0.0, top, xtol=1e-12))

