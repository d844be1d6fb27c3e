"""RFC 2544 §26.1 binary search against simulated DUTs of known capacity."""

import random

import pytest

from v6bench.methods.binary_search import search
from v6bench.core.tester import Measurement


class SimulatedDut:
    """Forwards up to ``capacity_fps``; loses the excess. A tester that can
    offer at most ``tester_max_fps``. Seeded noise on the capacity."""

    def __init__(self, capacity_fps, tester_max_fps=float("inf"), noise=0.0, seed=1):
        self.capacity_fps, self.tester_max_fps, self.noise = capacity_fps, tester_max_fps, noise
        self.rng = random.Random(seed)
        self.loads = []

    def measure(self, duration_s, load_fps):
        self.loads.append(load_fps)
        tx = round(load_fps * duration_s)
        cap = self.capacity_fps * (1 + self.rng.uniform(-self.noise, self.noise))
        rx = min(tx, round(cap * duration_s))
        return Measurement(duration_s, load_fps, min(load_fps, self.tester_max_fps), tx, rx, load_fps > self.tester_max_fps)


@pytest.mark.parametrize("capacity", [1_000, 123_456, 700_000])
def test_finds_known_capacity_within_resolution(capacity):
    res = search(SimulatedDut(capacity), 1.0, 1_000_000, resolution=0.01, max_trials=30)
    assert capacity * 0.99 <= res.throughput_fps <= capacity
    assert res.failed_fps is not None and res.failed_fps > capacity
    assert not res.is_lower_bound and res.best.loss_ratio == 0


def test_line_rate_passes_in_one_trial():
    res = search(SimulatedDut(2_000_000), 1.0, 1_000_000)
    assert res.throughput_fps == 1_000_000 and len(res.trials) == 1


def test_tester_limit_gives_a_lower_bound():
    res = search(SimulatedDut(900_000, tester_max_fps=300_000), 1.0, 1_000_000, resolution=0.01, max_trials=30)
    assert res.is_lower_bound
    assert 297_000 <= res.throughput_fps <= 300_000
    assert res.tester_limited_fps > 300_000


def test_search_is_bounded_and_deterministic():
    a = SimulatedDut(0)  # loses everything
    res = search(a, 1.0, 1_000_000, max_trials=7)
    assert len(res.trials) == 7 and res.throughput_fps == 0 and res.best is None
    b1, b2 = SimulatedDut(400_000, noise=0.05, seed=7), SimulatedDut(400_000, noise=0.05, seed=7)
    assert search(b1, 1.0, 1e6).throughput_fps == search(b2, 1.0, 1e6).throughput_fps


def test_a_dut_that_loses_everything_stops_at_the_lowest_load():
    """Loads giving fewer than 10 frames a trial are not tried: the search
    ends with throughput 0 rather than ask for a trial of (almost) no frame."""
    dut = SimulatedDut(0)
    res = search(dut, 1.0, 40_000, max_trials=40)
    assert res.throughput_fps == 0 and res.failed_fps == min(dut.loads)
    assert 10 <= min(dut.loads) < 20 and len(res.trials) == 12
    short = SimulatedDut(0)
    search(short, 0.01, 100_000, max_trials=40)
    assert min(short.loads) * 0.01 >= 10


@pytest.mark.parametrize("capacity", [1_000, 48_000, 123_456, 700_000, 999_999])
@pytest.mark.parametrize("start", [500, 50_000, 125_000, 690_000, 2_000_000])
def test_a_search_from_a_neighbour_finds_what_the_search_from_the_line_rate_finds(capacity, start):
    """Wherever it starts (below, at or above the answer, beyond the line
    rate), the bracketed search ends within the resolution of the known
    capacity, as the search from the line rate does."""
    from_line = search(SimulatedDut(capacity), 1.0, 1_000_000, resolution=0.01, max_trials=40)
    res = search(SimulatedDut(capacity), 1.0, 1_000_000, resolution=0.01, max_trials=40, start_fps=start)
    assert capacity * 0.99 <= res.throughput_fps <= capacity
    assert abs(res.throughput_fps - from_line.throughput_fps) <= 0.01 * capacity
    assert res.failed_fps is not None and res.failed_fps > capacity


def test_a_close_neighbour_saves_trials_and_a_far_one_costs_few():
    capacity = 160_000
    from_line = search(SimulatedDut(capacity), 60.0, 844_594, resolution=0.01, max_trials=40)
    close = search(SimulatedDut(capacity), 60.0, 844_594, resolution=0.01, max_trials=40, start_fps=161_500)
    far = search(SimulatedDut(capacity), 60.0, 844_594, resolution=0.01, max_trials=40, start_fps=40_000)
    # A neighbour 1 % off: 4 trials of 60 s instead of 11; one four times too low: 3 more than from the line rate.
    assert len(from_line.trials) == 11 and len(close.trials) == 4 and len(far.trials) == 14
    assert [round(m.intended_load_fps) for m in close.trials[:2]] == [161_500, 155_040]


def test_a_neighbour_start_stops_at_the_line_rate_and_at_the_lowest_load():
    up = SimulatedDut(2_000_000)
    res = search(up, 1.0, 1_000_000, start_fps=900_000)
    assert res.throughput_fps == 1_000_000 and up.loads[-1] == 1_000_000 and len(up.loads) == 3
    down = SimulatedDut(0)
    res = search(down, 1.0, 40_000, max_trials=40, start_fps=30_000)
    assert res.throughput_fps == 0 and min(down.loads) == 10 and down.loads.count(10) == 1
    with pytest.raises(ValueError, match="start_fps"):
        search(up, 1.0, 1e6, start_fps=0)
