"""bench/engine_vs_trafgen.py's interval of the median of the walk's
paired ratios: the ranks of the published table of distribution-free 95 %
intervals of a median (Campbell and Gardner, "Calculating confidence
intervals for some non-parametric analyses", BMJ 1988)."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import engine_vs_trafgen  # noqa: E402


@pytest.mark.parametrize("n, ranks", [(6, (1, 6)), (10, (2, 9)), (20, (6, 15)), (35, (12, 24)), (50, (18, 33))])
def test_the_median_interval_takes_the_published_ranks(n, ranks):
    values = [float(k) for k in range(n, 0, -1)]  # the value of rank k is k, given in reverse
    assert engine_vs_trafgen.median_interval(values) == (float(ranks[0]), float(ranks[1]))


def test_five_rounds_give_no_95_percent_interval():
    assert engine_vs_trafgen.median_interval([1.0, 0.9, 1.1, 1.2, 0.8]) is None
