"""Runs nested in machines: the three-level random-effects model.

Several runs of one machine share that machine's own difference, so
they are not independent studies: pooled as if they were, four runs on
two machines would give a claim "on every machine" three degrees of
freedom that two machines cannot carry. The model (Konstantopoulos
2011; metafor's ``rma.mv`` with a random intercept a machine and one a
run within it):

    y_ij = μ + u_i + w_ij + e_ij,   u_i ~ N(0, σ²_machine),
    w_ij ~ N(0, σ²_run),            e_ij ~ N(0, v_ij)

for run ``j`` of machine ``i``, its estimate ``y_ij`` with sampling
variance ``v_ij``. Runs of one machine are correlated through
``u_i``: ``V`` is block-diagonal, a block ``diag(v_ij + σ²_run) +
σ²_machine · J`` per machine.

- σ²_machine and σ²_run by restricted maximum likelihood (REML),
  maximized over [0, ∞)² by scipy (L-BFGS-B from several starts, and
  each boundary where one component is 0);
- μ by generalized least squares, weights ``V⁻¹``; its standard error
  ``sqrt((1ᵀV⁻¹1)⁻¹)``, metafor's;
- its interval and p-value from a t distribution with m − 1 degrees of
  freedom, m the number of machines: a claim about machines rests on
  the number of machines (the between-cluster degrees of freedom of
  a multilevel model's fixed intercept), and the standard error is
  scaled as Hartung & Knapp scale it, by the machines' weighted
  residual mean square, never below 1 (Röver, Knapp & Friede 2015):
  with three machines REML often puts σ²_machine at 0 and the model's
  own standard error is then too small. Seeded simulations in
  ``tests/unit/test_nested.py`` check the coverage.

Checked against metafor's fit of ``dat.konstantopoulos2011`` (56
studies in 11 districts): μ 0.1847, SE 0.0846, σ² 0.0651 (districts)
and 0.0327 (studies), restricted log-likelihood −7.9587.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize
from scipy import stats as sps

from .stats import ALPHA


@dataclass(frozen=True)
class NestedFit:
    """A three-level fit: ``k`` estimates from ``m`` machines."""

    k: int
    m: int
    mu: float
    #: metafor's model-based standard error of μ.
    se_model: float
    #: The standard error the interval uses (the model's, scaled; module docstring).
    se: float
    df: int
    ci: tuple[float, float]
    p: float
    sigma2_machine: float
    sigma2_run: float
    #: The restricted log-likelihood at the fit, with metafor's constants.
    loglik_reml: float


@dataclass(frozen=True)
class _Data:
    y: np.ndarray
    v: np.ndarray
    #: Each estimate's machine, as 0 … m − 1.
    machine: np.ndarray
    m: int


@dataclass(frozen=True)
class _Gls:
    """What the likelihood and μ need at one (σ²_machine, σ²_run): per
    machine ``a = 1ᵀD⁻¹1``, ``c = 1 + σ²_machine·a`` and the machine's
    weight ``1ᵀV_i⁻¹1`` (Sherman–Morrison for ``V_i = D + σ²_machine·J``)."""

    dinv: np.ndarray
    a: np.ndarray
    c: np.ndarray
    w: np.ndarray
    mu: float
    logdet: float


def _gls(d: _Data, s2_machine: float, s2_run: float) -> _Gls:
    dd = d.v + s2_run
    dinv = 1.0 / dd
    a = np.bincount(d.machine, dinv, d.m)
    b = np.bincount(d.machine, dinv * d.y, d.m)
    c = 1.0 + s2_machine * a
    w = a - s2_machine * a * a / c
    wy = b - s2_machine * a * b / c
    mu = float(np.sum(wy) / np.sum(w))
    return _Gls(dinv, a, c, w, mu, float(np.sum(np.log(dd)) + np.sum(np.log(c))))


def _quad(d: _Data, g: _Gls, s2_machine: float) -> float:
    """rᵀV⁻¹r with r = y − μ."""
    r = d.y - g.mu
    s = np.bincount(d.machine, g.dinv * r, d.m)
    return float(np.sum(g.dinv * r * r) - s2_machine * np.sum(s * s / g.c))


def _neg_reml(theta, d: _Data) -> float:
    """−(restricted log-likelihood) without its constants."""
    s2_machine, s2_run = max(float(theta[0]), 0.0), max(float(theta[1]), 0.0)
    g = _gls(d, s2_machine, s2_run)
    return 0.5 * (g.logdet + math.log(float(np.sum(g.w))) + _quad(d, g, s2_machine))


def _reml(d: _Data) -> tuple[float, float]:
    """(σ²_machine, σ²_run) maximizing the restricted likelihood over [0, ∞)²:
    L-BFGS-B from two starts, and the corner, the best kept."""
    scale = float(np.var(d.y)) + float(np.mean(d.v)) + 1e-12
    top = 10.0 * (float(np.var(d.y)) + float(np.max(d.v))) + 1e-12
    best = (_neg_reml((0.0, 0.0), d), (0.0, 0.0))
    for start in ((0.5, 0.5), (0.9, 0.1)):
        r = optimize.minimize(_neg_reml, np.array(start) * scale, args=(d,), method="L-BFGS-B",
                              bounds=[(0.0, top), (0.0, top)], options={"ftol": 1e-15, "gtol": 1e-12})
        best = min(best, (float(r.fun), (float(r.x[0]), float(r.x[1]))))
    return best[1]


def fit(y: list[float], v: list[float], clusters: list) -> NestedFit:
    """The three-level fit of estimates ``y`` with sampling variances
    ``v``, ``clusters[i]`` naming the machine of estimate ``i`` (module
    docstring). Needs two machines or more and every variance > 0."""
    yy, vv = np.asarray(y, float), np.asarray(v, float)
    k = len(yy)
    if len(clusters) != k:
        raise ValueError(f"{len(clusters)} machines named for {k} estimates")
    if np.any(vv <= 0):
        raise ValueError("every sampling variance must be positive")
    order = {c: i for i, c in enumerate(dict.fromkeys(clusters))}
    m = len(order)
    if m < 2:
        raise ValueError(f"{m} machine: pooling across machines needs 2 or more")
    d = _Data(yy, vv, np.array([order[c] for c in clusters]), m)
    s2_machine, s2_run = _reml(d)
    g = _gls(d, s2_machine, s2_run)
    mu, sum_w = g.mu, float(np.sum(g.w))
    se_model = math.sqrt(1.0 / sum_w)
    loglik = (-0.5 * (k - 1) * math.log(2 * math.pi) + 0.5 * math.log(k)
              - 0.5 * (g.logdet + math.log(sum_w) + _quad(d, g, s2_machine)))
    # Hartung–Knapp on the machines: each machine's GLS mean against μ, weighted by
    # its weight 1ᵀV_i⁻¹1, on m − 1 degrees of freedom; the scale never below 1.
    df = m - 1
    b = np.bincount(d.machine, g.dinv * yy, m)
    means = (b - s2_machine * g.a * b / g.c) / g.w
    resid = float(np.sum(g.w * (means - mu) ** 2))
    se = se_model * math.sqrt(max(1.0, resid / df))
    t = float(sps.t.ppf(1 - ALPHA / 2, df))
    p = float(2 * sps.t.sf(abs(mu / se), df)) if se > 0 else (1.0 if mu == 0 else 0.0)
    return NestedFit(k, m, mu, se_model, se, df, (mu - t * se, mu + t * se), p, s2_machine, s2_run, loglik)
