"""A run's effect for pooling (report/log_ratio.py): its own standard error
and degrees of freedom from the values, the control's variance counted,
checked against scipy and statsmodels and by seeded simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import stats as sps

from v6bench.report import log_ratio
from v6bench.report.regression import blocked_slope


def test_paired_skewed_values_are_the_t_statistics_of_the_trials_log_ratios():
    a = [20.1, 19.5, 21.0, 20.4, 19.9, 20.7]
    b = [20.9, 20.2, 21.8, 21.0, 20.8, 21.5]
    lr = log_ratio.of_samples(a, b, "location", paired=True)
    d = np.log(np.array(b) / np.array(a))
    r = sps.ttest_1samp(d, 0.0)
    assert lr.y == pytest.approx(float(d.mean()))
    assert lr.y / lr.se == pytest.approx(float(r.statistic)) and lr.df == 5


def test_unpaired_skewed_values_are_welchs_test_on_the_logarithms():
    a, b = [18.0, 19.5, 21.0, 20.4, 23.9], [22.1, 24.2, 21.8, 25.0, 23.3, 26.0]
    lr = log_ratio.of_samples(a, b, "location", paired=False)
    r = sps.ttest_ind(np.log(b), np.log(a), equal_var=False)
    assert lr.y / lr.se == pytest.approx(float(r.statistic))
    assert lr.df == pytest.approx(float(r.df))


def test_a_ratio_of_means_counts_the_controls_variance():
    """The delta method: A's spread widens the ratio's standard error; with
    A taken as known (only B's variance over A's centre) it would not."""
    b = [101.0, 99.0, 102.0, 98.0, 100.0]
    steady = log_ratio.of_samples([100.0, 100.1, 99.9, 100.0, 100.05], b, "mean", paired=False)
    spread = log_ratio.of_samples([90.0, 110.0, 95.0, 105.0, 100.0], b, "mean", paired=False)
    assert spread.se > 3 * steady.se
    known_a = math.sqrt(np.var(b, ddof=1) / 5) / 100
    assert spread.se > 2 * known_a


def test_the_delta_method_standard_error_matches_the_spread_of_simulated_runs():
    """10,000 seeded runs of 6 searches a side (A 100 ± 8, B 90 ± 5): the
    standard deviation of ln(mean B / mean A) against the delta method's, the
    root of its variances' mean (a sample's standard deviation is biased low;
    its variance is not), within 3 %."""
    rng = np.random.default_rng(64)
    ys, ses = [], []
    for _ in range(10_000):
        a, b = rng.normal(100, 8, 6), rng.normal(90, 5, 6)
        lr = log_ratio.of_samples(list(a), list(b), "mean", paired=False)
        ys.append(lr.y), ses.append(lr.se)
    assert math.sqrt(float(np.mean(np.square(ses)))) == pytest.approx(float(np.std(ys)), rel=0.03)


def test_a_mix_regressions_ratio_counts_the_share_zero_values_variance():
    """The fitted value at share 0, a weighted mean of the blocks' levels, and
    its covariance with the slope come from the OLS fit (statsmodels)."""
    rng = np.random.default_rng(2)
    obs = [(k, s, 100 + 3 * k + 8 * s + rng.normal(0, 1)) for k in range(6) for s in (0.0, 0.5, 1.0)]
    f = blocked_slope(obs)
    x = np.column_stack([[o[1] for o in obs]] + [[1.0 if o[0] == k else 0.0 for o in obs] for k in range(6)])
    fit = sm.OLS([o[2] for o in obs], x).fit()
    lvl = np.array([0.0] + [1 / 6] * 6)
    assert f.at_zero == pytest.approx(float(lvl @ fit.params))
    assert f.var_at_zero == pytest.approx(float(lvl @ fit.cov_params() @ lvl))
    lr = log_ratio.of_slope(f.at_zero, f.slope, f.var_at_zero, f.se ** 2, f.cov_at_zero_slope, f.df)
    known_a = f.se / (f.at_zero + f.slope)
    assert lr.y == pytest.approx(math.log((f.at_zero + f.slope) / f.at_zero)) and lr.se > known_a and lr.df == f.df


@pytest.mark.parametrize("a, b, estimator, paired", [
    ([1.0], [2.0, 3.0], "mean", False),          # one value a side: no spread
    ([-1.0, 0.5, 0.4], [2.0, 3.0, 2.5], "mean", False),  # A's mean not positive
    ([5.0, 5.0, 5.0], [5.0, 5.0, 5.0], "location", True),  # equal every time: no variance
])
def test_no_log_ratio_where_there_is_none(a, b, estimator, paired):
    assert log_ratio.of_samples(a, b, estimator, paired) is None


def test_a_runs_pooled_variance_is_students_t_on_its_degrees_of_freedom():
    """A standard error from few trials is itself uncertain: pooled, the run's variance is its squared
    standard error times t's variance on its df (scipy's), so a run on 5 df weighs 3/5 of one whose
    error is known; on 2 df or fewer that variance is not finite and the run is not pooled."""
    from v6bench.report.across import RunEffect

    def run(df: float) -> RunEffect:
        return RunEffect(1, "m", {}, 0.0, 1.0, 0.5, 1.5, "none", "", 6, 6, 1.0, 1.01, "IPv4", (0.01, 0.02, df))
    for df in (3.0, 5.0, 9.3, 40.0):
        assert run(df).log_ratio == pytest.approx((0.01, 0.02 ** 2 * float(sps.t.var(df))), rel=1e-12)
    assert run(2.0).log_ratio is None and run(1.0).log_ratio is None
