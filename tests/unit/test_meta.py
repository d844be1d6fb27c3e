"""The random-effects meta-analysis (report/meta.py) against published
fits: metafor's BCG vaccine example (dat.bcg, 13 trials, log risk
ratios; Viechtbauer 2010, J. Stat. Softw. 36(3), and the metafor
documentation of rma.uni)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from v6bench.report import meta

#: dat.bcg: vaccinated TB+, TB−, controls TB+, TB−, absolute latitude.
BCG = [(4, 119, 11, 128, 44), (6, 300, 29, 274, 55), (3, 228, 11, 209, 42), (62, 13536, 248, 12619, 52),
       (33, 5036, 47, 5761, 13), (180, 1361, 372, 1079, 44), (8, 2537, 10, 619, 19), (505, 87886, 499, 87892, 13),
       (29, 7470, 45, 7232, 27), (17, 1699, 65, 1600, 42), (186, 50448, 141, 27197, 18), (5, 2493, 3, 2338, 33),
       (27, 16886, 29, 17825, 33)]


def _bcg():
    y = [math.log((a / (a + b)) / (c / (c + d))) for a, b, c, d, _ in BCG]
    v = [1 / a - 1 / (a + b) + 1 / c - 1 / (c + d) for a, b, c, d, _ in BCG]
    return y, v


def test_random_effects_reproduces_metafors_reml_fit_of_dat_bcg():
    y, v = _bcg()
    f = meta.fit(y, v)
    assert f.tau2 == pytest.approx(0.3132, abs=1e-3)
    assert f.beta[0] == pytest.approx(-0.7145, abs=1e-3)
    assert f.q == pytest.approx(152.2330, abs=1e-3) and f.q_df == 12
    assert f.i2_pct == pytest.approx(92.22, abs=0.01)
    # rma(yi, vi, data = dat, test = "knha"): the Hartung–Knapp interval (q > 1 here, so the ad hoc floor changes nothing).
    assert f.beta_ci[0] == pytest.approx((-1.1084, -0.3206), abs=1e-3)


def test_a_moderator_reproduces_metafors_meta_regression_on_latitude():
    y, v = _bcg()
    f = meta.fit(y, v, np.array([[r[4]] for r in BCG]))
    assert f.tau2 == pytest.approx(0.0764, abs=1e-3)
    assert f.beta == pytest.approx((0.2515, -0.0291), abs=1e-3)
    assert f.moderator_p < 0.01


def test_runs_that_agree_closely_never_get_an_interval_narrower_than_the_model():
    """Two runs at −14.4 % and −14.1 % with wide intervals: the plain Hartung–Knapp scale (≈ 0) would give ±1.6 %."""
    y = [math.log(1 - 0.144), math.log(1 - 0.1415)]
    v = [0.15 ** 2, 0.17 ** 2]
    lo, hi = meta.fit(y, v).beta_ci[0]
    assert hi - lo > 2 * 12.7 * 0.11  # t(1) times at least the fixed-effect standard error


def test_no_heterogeneity_gives_tau_zero_and_identical_estimates_pool_to_themselves():
    f = meta.fit([0.02, 0.02, 0.02], [1e-4, 2e-4, 1e-4])
    assert f.tau2 == 0.0 and f.beta[0] == pytest.approx(0.02) and f.q == pytest.approx(0.0)
    with pytest.raises(ValueError):
        meta.fit([0.1], [0.01])


def test_the_tau_q_could_have_seen_is_seen_as_often_as_stated():
    """Seeded: runs drawn with the detectable τ between them are found
    heterogeneous by Q at α = 0.05 in about 80 % of 4,000 simulations."""
    v = [0.004 ** 2, 0.006 ** 2, 0.005 ** 2, 0.008 ** 2]
    tau = meta.detectable_tau(v, 0.8)
    assert meta.q_power(v, 0.0) == pytest.approx(0.05, abs=1e-9) and meta.q_power(v, tau * tau) == pytest.approx(0.8)
    rng = np.random.default_rng(63)
    sd = np.sqrt(v)
    seen = 0
    for _ in range(4000):
        y = rng.normal(0.0, tau, 4) + rng.normal(0.0, sd)
        seen += meta.fit(list(y), v).q_p < 0.05
    assert 0.76 <= seen / 4000 <= 0.84
