"""Sequential comparisons stay valid under optional stopping
(report/sequential.py; docs/report.md, "Sequential comparisons"), shown by
seeded simulation: every draw comes from a fixed seed."""

import numpy as np
import pytest

from v6bench.report import sequential
from scipy import stats as sps

from v6bench.report.stats import ALPHA

DESIGN = sequential.Design(min_n=6, max_n=20)


def test_the_spending_adds_up_to_alpha_and_spends_little_early():
    spent = [DESIGN.alpha_at(n) for n in range(6, 21)]
    assert sum(spent) == pytest.approx(ALPHA)
    assert spent[0] == pytest.approx(ALPHA * (6 / 20) ** 3) and spent[0] < spent[-1]
    assert DESIGN.alpha_at(5) == DESIGN.alpha_at(21) == 0.0
    with pytest.raises(ValueError):
        sequential.Design(min_n=1, max_n=4)
    with pytest.raises(ValueError):
        sequential.Design(min_n=6, max_n=5)


def test_the_sequential_p_value_scales_each_look_by_its_share():
    assert sequential.sequential_p([(6, 0.001)], DESIGN) == pytest.approx(0.001 * ALPHA / DESIGN.alpha_at(6))
    assert sequential.sequential_p([(6, 0.9), (20, 0.001)], DESIGN) == pytest.approx(0.001 * ALPHA / DESIGN.alpha_at(20))
    assert sequential.sequential_p([(6, 0.9)], DESIGN) == 1.0


def _paired_sequences(rng, count: int, effect_pct: float, sd_pct: float = 1.0):
    """``count`` sequences of 20 paired trials: A around 100, B = A + effect, the
    differences' noise ``sd_pct`` %."""
    for _ in range(count):
        a = 100 + rng.normal(0, 1, 20)
        yield list(a), list(a * (1 + effect_pct / 100) + rng.normal(0, sd_pct, 20))


def test_aa_sequences_stopped_when_decided_say_differs_at_most_alpha():
    """1,000 A/A sequences, paired t, looked at after every pair from 6 to
    20 and stopped at the first decided look (an interval excluding 0 or
    within ±0.5 %): at most 5 % end in "differs". Looking the same way at
    plain 95 % intervals says "differs" far more often: the test can fail."""
    rng = np.random.default_rng(63)
    design = sequential.Design(6, 20, precision_pct=0.5)
    false = naive = 0
    for a, b in _paired_sequences(rng, 1000, 0.0):
        c, s = sequential.compare_sequence(a, b, design, estimator="mean", paired=True)
        false += s == "differs" and c.p < ALPHA
        d = np.subtract(b, a)
        naive += any(sps.ttest_1samp(d[:n], 0.0).pvalue < ALPHA for n in range(6, 21))
    assert false <= 1000 * ALPHA
    assert naive > 2 * 1000 * ALPHA


def test_intervals_at_the_stop_cover_a_known_effect():
    """1,000 sequences with a known 0.8 % effect: the interval of the look
    each stopped at covers it at least 95 % of the time."""
    rng = np.random.default_rng(64)
    design = sequential.Design(6, 20, precision_pct=0.5)
    covered, stopped_early = 0, 0
    for a, b in _paired_sequences(rng, 1000, 0.8):
        c, s = sequential.compare_sequence(a, b, design, estimator="mean", paired=True)
        covered += c.ci_low_pct <= 0.8 <= c.ci_high_pct
        stopped_early += c.n_a < 20
    assert covered >= 950
    assert stopped_early > 500  # and it saves repetitions: most stop before the maximum


def test_skewed_delays_by_ranks_stay_within_alpha():
    """200 A/A sequences of skewed per-trial delays (log-normal) compared by
    the paired signed-rank ratio, as latency is: at most 5 % "differs"
    plus three binomial standard errors."""
    rng = np.random.default_rng(65)
    design = sequential.Design(6, 12)
    false = 0
    for _ in range(200):
        a = list(np.exp(rng.normal(3, 0.3, 12)))
        b = list(np.array(a) * np.exp(rng.normal(0, 0.05, 12)))
        c, s = sequential.compare_sequence(a, b, design, estimator="location", paired=True)
        false += s == "differs"
    assert false <= 200 * ALPHA + 3 * (200 * ALPHA * (1 - ALPHA)) ** 0.5


def test_a_clear_difference_stops_early_and_differs():
    rng = np.random.default_rng(66)
    a = list(100 + rng.normal(0, 1, 20))
    b = [x * 1.05 + rng.normal(0, 0.5) for x in a]
    c, s = sequential.compare_sequence(a, b, DESIGN, estimator="mean", paired=True)
    assert s == "differs" and c.n_a < 10 and c.p < ALPHA and c.ci_low_pct > 0
