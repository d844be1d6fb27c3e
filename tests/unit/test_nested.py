"""Runs nested in machines (report/nested.py): metafor's published
three-level fit, and seeded simulations of its intervals' coverage."""

from __future__ import annotations

import numpy as np
import pytest

from v6bench.report import meta, nested

#: dat.konstantopoulos2011 (metafor; Konstantopoulos 2011, Res. Synth. Methods 2, 61-76): 56 studies of
#: modified school calendars in 11 districts, {district: [(yi, vi) per study]}.
K2011 = {
    11: [(-0.18, 0.118), (-0.22, 0.118), (0.23, 0.144), (-0.3, 0.144)],
    12: [(0.13, 0.014), (-0.26, 0.014), (0.19, 0.015), (0.32, 0.024)],
    18: [(0.45, 0.023), (0.38, 0.043), (0.29, 0.012)],
    27: [(0.16, 0.02), (0.65, 0.004), (0.36, 0.004), (0.6, 0.007)],
    56: [(0.08, 0.019), (0.04, 0.007), (0.19, 0.005), (-0.06, 0.004)],
    58: [(-0.18, 0.02), (0.0, 0.018), (0.0, 0.019), (-0.28, 0.022), (-0.04, 0.02), (-0.3, 0.021), (0.07, 0.006), (0.0, 0.007), (0.05, 0.007), (-0.08, 0.007), (-0.09, 0.007)],
    71: [(0.3, 0.015), (0.98, 0.011), (1.19, 0.01)],
    86: [(-0.07, 0.001), (-0.05, 0.001), (-0.01, 0.001), (0.02, 0.001), (-0.03, 0.001), (0.0, 0.001), (0.01, 0.001), (-0.1, 0.001)],
    91: [(0.5, 0.01), (0.66, 0.011), (0.2, 0.01), (0.0, 0.009), (0.05, 0.013), (0.07, 0.013)],
    108: [(-0.52, 0.031), (0.7, 0.031), (-0.03, 0.03), (0.27, 0.03), (-0.34, 0.03)],
    644: [(0.12, 0.087), (0.61, 0.082), (0.04, 0.067), (-0.05, 0.067)],
}


def _k2011():
    y, v, districts = [], [], []
    for district, studies in K2011.items():
        for yi, vi in studies:
            y.append(yi), v.append(vi), districts.append(district)
    return y, v, districts


def test_reproduces_metafors_three_level_fit_of_dat_konstantopoulos2011():
    """metafor's rma.mv on dat.konstantopoulos2011, random intercepts for districts and schools within them."""
    f = nested.fit(*_k2011())
    assert (f.k, f.m) == (56, 11)
    assert f.mu == pytest.approx(0.1847, abs=1e-4)
    assert f.se_model == pytest.approx(0.0846, abs=1e-4)
    assert f.sigma2_machine == pytest.approx(0.0651, abs=1e-4)
    assert f.sigma2_run == pytest.approx(0.0327, abs=1e-4)
    assert f.loglik_reml == pytest.approx(-7.9587, abs=1e-4)
    assert f.df == 10 and f.ci[0] < f.mu < f.ci[1]


def _simulate(machines: int, runs: int, seed: int, sims: int = 1000):
    """``sims`` seeded data sets of ``machines`` × ``runs`` log ratios around a
    true 0.02, each drawing how much machines and runs differ (0 to 4 and 0 to 2
    times the within-run standard error 0.005) and each run's own variance."""
    rng = np.random.default_rng(seed)
    true, sv = 0.02, 0.005
    for _ in range(sims):
        s_machine = rng.choice([0.0, 0.5, 1.0, 2.0, 4.0]) * sv
        s_run = rng.choice([0.0, 0.5, 1.0, 2.0]) * sv
        u = rng.normal(0.0, s_machine, machines)
        v = (sv * rng.uniform(0.5, 1.5, (machines, runs))) ** 2
        y = true + u[:, None] + rng.normal(0.0, s_run, (machines, runs)) + rng.normal(0.0, np.sqrt(v))
        yield true, list(y.ravel()), list(v.ravel()), [i for i in range(machines) for _ in range(runs)]


@pytest.mark.parametrize("machines, runs", [(3, 2), (5, 3)])
def test_intervals_cover_the_true_pooled_effect_at_least_95_percent_of_the_time(machines, runs):
    covered = sum(f.ci[0] <= true <= f.ci[1] for true, y, v, c in _simulate(machines, runs, seed=machines * 10 + runs)
                  for f in [nested.fit(y, v, c)])
    assert covered >= 950


def test_runs_of_one_machine_do_not_count_as_machines():
    """Four runs on two machines that differ: pooled as four independent runs the
    interval rests on 3 df and excludes 0; nested, on 1 df, it does not."""
    y = [0.030, 0.031, 0.010, 0.011]
    v = [0.002 ** 2] * 4
    independent = meta.fit(y, v)
    f = nested.fit(y, v, ["a", "a", "b", "b"])
    assert independent.q_df == 3 and independent.beta_ci[0][0] > 0
    assert f.df == 1 and f.ci[0] < 0 < f.ci[1]


def test_refuses_one_machine_and_a_mismatch():
    with pytest.raises(ValueError, match="2 or more"):
        nested.fit([0.1, 0.2], [0.01, 0.01], ["a", "a"])
    with pytest.raises(ValueError, match="machines named"):
        nested.fit([0.1, 0.2], [0.01, 0.01], ["a"])
    with pytest.raises(ValueError, match="positive"):
        nested.fit([0.1, 0.2], [0.01, 0.0], ["a", "b"])


def test_the_likelihoods_gradient_is_its_derivative():
    """The analytic gradient the optimizer uses against central differences, on the published data."""
    y, v, districts = _k2011()
    order = {c: i for i, c in enumerate(dict.fromkeys(districts))}
    which = np.array([order[c] for c in districts])
    d = nested._Data(np.array(y), np.array(v), which, len(order), (which[:, None] == which[None, :]).astype(float))
    for theta in ((0.065, 0.033), (0.01, 0.2), (0.3, 0.001)):
        _, grad = nested._neg_reml(theta, d)
        h = 1e-6
        numeric = [(nested._neg_reml(np.add(theta, e), d)[0] - nested._neg_reml(np.subtract(theta, e), d)[0]) / (2 * h)
                   for e in ((h, 0.0), (0.0, h))]
        assert grad == pytest.approx(numeric, rel=1e-5, abs=1e-6)
