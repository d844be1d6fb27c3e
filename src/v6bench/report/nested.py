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
  maximized over [0, ∞)² by scipy (L-BFGS-B with the analytic gradient,
  from two starts, and the corner where both are 0);
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
    #: 1 where two estimates share a machine (``ZZᵀ``).
    zzt: np.ndarray


@dataclass(frozen=True)
class _At:
    """The model at one (σ²_machine, σ²_run): ``V⁻¹``, its row sums
    ``V⁻¹1``, ``1ᵀV⁻¹1``, ``P = V⁻¹ − V⁻¹1 1ᵀV⁻¹ / 1ᵀV⁻¹1``, ``Py`` and
    ``log|V|`` (dense: a comparison pools tens of runs, not thousands)."""

    vinv: np.ndarray
    w1: np.ndarray
    sum_w: float
    p: np.ndarray
    py: np.ndarray
    logdet: float


def _at(theta, d: _Data) -> _At:
    s2_machine, s2_run = max(float(theta[0]), 0.0), max(float(theta[1]), 0.0)
    v = np.diag(d.v + s2_run) + s2_machine * d.zzt
    vinv = np.linalg.inv(v)
    w1 = vinv.sum(axis=1)
    sum_w = float(w1.sum())
    p = vinv - np.outer(w1, w1) / sum_w
    return _At(vinv, w1, sum_w, p, p @ d.y, float(np.linalg.slogdet(v)[1]))


def _neg_reml(theta, d: _Data) -> tuple[float, np.ndarray]:
    """−(restricted log-likelihood) without its constants,
    ½(log|V| + log 1ᵀV⁻¹1 + yᵀPy), and its gradient in (σ²_machine,
    σ²_run), ½(tr(P ∂V) − yᵀP ∂V Py), ∂V being the machines' block
    indicator ``ZZᵀ`` or the identity."""
    a = _at(theta, d)
    value = 0.5 * (a.logdet + math.log(a.sum_w) + float(d.y @ a.py))
    zpy = np.bincount(d.machine, a.py, d.m)
    grad = 0.5 * np.array([float(np.sum(a.p * d.zzt)) - float(zpy @ zpy), float(np.trace(a.p)) - float(a.py @ a.py)])
    return value, grad


def _reml(d: _Data) -> tuple[float, float]:
    """(σ²_machine, σ²_run) maximizing the restricted likelihood over [0, ∞)²:
    L-BFGS-B with the gradient from two starts, and the corner, the best kept."""
    scale = float(np.var(d.y)) + float(np.mean(d.v)) + 1e-12
    top = 10.0 * (float(np.var(d.y)) + float(np.max(d.v))) + 1e-12
    best = (_neg_reml((0.0, 0.0), d)[0], (0.0, 0.0))
    for start in ((0.5, 0.5), (0.9, 0.1)):
        r = optimize.minimize(_neg_reml, np.array(start) * scale, args=(d,), jac=True, method="L-BFGS-B",
                              bounds=[(0.0, top), (0.0, top)], options={"ftol": 1e-13, "gtol": 1e-10})
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
    which = np.array([order[c] for c in clusters])
    d = _Data(yy, vv, which, m, (which[:, None] == which[None, :]).astype(float))
    s2_machine, s2_run = _reml(d)
    at = _at((s2_machine, s2_run), d)
    vy = at.vinv @ yy
    mu = float(np.sum(vy)) / at.sum_w
    se_model = math.sqrt(1.0 / at.sum_w)
    loglik = (-0.5 * (k - 1) * math.log(2 * math.pi) + 0.5 * math.log(k)
              - _neg_reml((s2_machine, s2_run), d)[0])
    # Hartung–Knapp on the machines: each machine's GLS mean (V is block-diagonal) against μ,
    # weighted by its 1ᵀV_i⁻¹1, on m − 1 degrees of freedom; the scale never below 1.
    df = m - 1
    weights = np.bincount(which, at.w1, m)
    means = np.bincount(which, vy, m) / weights
    resid = float(np.sum(weights * (means - mu) ** 2))
    se = se_model * math.sqrt(max(1.0, resid / df))
    t = float(sps.t.ppf(1 - ALPHA / 2, df))
    p = float(2 * sps.t.sf(abs(mu / se), df)) if se > 0 else (1.0 if mu == 0 else 0.0)
    return NestedFit(k, m, mu, se_model, se, df, (mu - t * se, mu + t * se), p, s2_machine, s2_run, loglik)
