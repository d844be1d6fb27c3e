"""The DUT's cost per frame: from each lab's forwarding work to a trial's
ns per frame (lab/machine/cost.py), and its verdict, the slope over the IPv6 share
across repetition blocks (report/regression.py), against published
regression examples."""

import numpy as np
import pytest

from v6bench.lab.machine import cost
from v6bench.lab.external.snmp import CPU_SOURCES, cpu_over_window
from v6bench.report import data, family_pairs, regression, samples, stats, verdicts

from test_stats import SLEEP_1, SLEEP_2

# Anscombe (1973), "Graphs in statistical analysis", data set I: the published fit is y = 3.00 + 0.500 x,
# standard error of the slope 0.118, t = 4.24 with 9 degrees of freedom (p = 0.00217), R² = 0.667.
ANSCOMBE_X = [10, 8, 13, 9, 11, 14, 6, 4, 12, 7, 5]
ANSCOMBE_Y1 = [8.04, 6.95, 7.58, 8.81, 8.33, 9.96, 7.24, 4.26, 10.84, 4.82, 5.68]


def test_the_slope_matches_anscombes_published_fit():
    fit = regression.blocked_slope([(0, x, y) for x, y in zip(ANSCOMBE_X, ANSCOMBE_Y1)])
    assert fit.slope == pytest.approx(0.5001, abs=5e-5) and fit.at_zero == pytest.approx(3.0001, abs=5e-5)
    assert fit.se == pytest.approx(0.1179, abs=5e-5) and fit.df == 9
    assert fit.slope / fit.se == pytest.approx(4.24, abs=0.005) and fit.p == pytest.approx(0.00217, abs=5e-6)


def test_two_shares_in_blocks_are_students_paired_t():
    """Blocks of two shares, 0 and 1: the slope is the mean paired
    difference and its interval the paired t's (sleep data: 1.58 h,
    0.7001142 … 2.4598858, p = 0.002833), whatever the blocks' levels."""
    obs = [(i, 0.0, v) for i, v in enumerate(SLEEP_1)] + [(i, 1.0, v + 0) for i, v in enumerate(SLEEP_2)]
    c = regression.mix_slope(obs)
    assert c.design == "mix regression" and c.test == "t on the slope (OLS)" and (c.n_a, c.n_b) == (20, 20)
    a = c.center_a
    assert c.center_b - a == pytest.approx(1.58)
    assert (c.ci_low_pct * a / 100, c.ci_high_pct * a / 100) == pytest.approx((0.7001142, 2.4598858), abs=1e-7)
    assert c.p == pytest.approx(0.002833, abs=5e-7)
    shifted = regression.mix_slope([(k, s, v + 100 * k) for k, s, v in obs])  # each block at its own level
    assert shifted.p == pytest.approx(c.p) and shifted.center_b - shifted.center_a == pytest.approx(1.58)


def test_a_mix_regression_finds_a_small_cost_through_block_drift():
    """Seed 002's five mixes, 10 blocks, IPv6 1 % dearer (77 ns of 7,700),
    each block shifted by up to ±5 % and each trial noisy by 0.5 %: the
    blocks cancel and the slope is found; the same trials compared as
    two unrelated samples of the pure mixes could not have seen it."""
    rng = np.random.default_rng(2)
    obs = []
    for k in range(10):
        level = 7700 * (1 + rng.uniform(-0.05, 0.05))
        for share in (0.0, 0.25, 0.5, 0.75, 1.0):
            obs.append((k, share, level * (1 + 0.01 * share) * (1 + rng.normal(0, 0.005))))
    [c] = stats.decide([regression.mix_slope(obs)])
    assert c.outcome == "differs" and c.ci_low_pct > 0 and c.ci_low_pct < 1 < c.ci_high_pct and c.mde_pct < 1
    pure = stats.compare([v for _, s, v in obs if s == 0], [v for _, s, v in obs if s == 1])
    assert pure.mde_pct > 2


def test_too_few_blocks_or_a_single_share_give_no_verdict():
    five = regression.mix_slope([(k, s, 100.0 + s + k) for k in range(5) for s in (0.0, 1.0)])
    assert five.outcome == "few" and five.p is None and "5 blocks; a mix regression needs 6" in five.verdict
    single = regression.mix_slope([(0, 0.0, 100.0), (0, 1.0, 102.0)])  # no residual: no error to state, no warning
    assert single.outcome == "few" and single.diff_pct == pytest.approx(2.0)
    one = regression.mix_slope([(k, 0.5, 100.0) for k in range(8)])
    assert one.p is None and one.verdict == "not measured at two IPv6 shares in one block"


def test_ns_per_frame_is_the_forwarding_share_over_the_forwarded_rate():
    work = cost.forwarding([0.3, 0.162], "threads", None)
    assert work["share"] == pytest.approx(0.462)
    c = cost.ns_per_frame(work, rx_frames=180_000, traffic_s=3.0)  # 60 kfps: 0.462 s of CPU a second
    assert c == {"ns_per_frame": pytest.approx(7700.0), "resolution_ns": None, "basis": "threads", "not_the_duts": None}
    assert cost.ns_per_frame(cost.forwarding([0.3, None], "threads"), 180_000, 3.0)["ns_per_frame"] is None
    assert cost.ns_per_frame(work, 0, 3.0)["ns_per_frame"] is None
    box = cost.ns_per_frame(cost.forwarding([0.25], "box", 0.0025), 30_000, 3.0)  # one tick in 400
    assert box["ns_per_frame"] == pytest.approx(25_000.0) and box["resolution_ns"] == pytest.approx(250.0)


def test_a_cost_is_not_the_duts_when_something_else_ran_on_its_cpus():
    """The DUT CPU busy 0.48 with its threads at 0.45: the threads' own
    unaccounted work, the cost stands; busy 1.0 with threads at 0.65 (a
    test run beside v6bench): not the DUT's alone, and the report leaves
    the trial out."""
    ok = cost.ns_per_frame(cost.forwarding([0.45], "threads", None, [0.48]), 120_000, 2.0)
    assert ok["not_the_duts"] is None and ok["ns_per_frame"] == pytest.approx(7500.0)
    busy = cost.ns_per_frame(cost.forwarding([0.65], "threads", None, [1.0]), 120_000, 2.0)
    assert busy["ns_per_frame"] == pytest.approx(10833.33) and "busy 0.35 CPU beyond its forwarding" in busy["not_the_duts"]
    assert cost.forwarding([0.45], "threads", None, [None])["other"] is None
    assert samples.trial_cost_ns({"result": {"dut_cost": busy}}) is None
    assert samples.trial_cost_ns({"result": {"dut_cost": ok}}) == pytest.approx(7500.0)


def test_an_snmp_reading_states_its_resolution():
    """Counters: one tick over the ticks between the updates used; a gauge: 1 %."""
    def ticks(busy, idle):
        return {"ticks": {"user": busy, "nice": 0, "system": 0, "idle": idle}}
    samples_ = [(0.0, ticks(0, 0)), (1.0, ticks(0, 0)), (2.0, ticks(100, 300)), (6.0, ticks(100, 300)),
                (7.0, ticks(300, 500))]
    out = cpu_over_window(CPU_SOURCES["ucd"], samples_, 0.5, 7.5)
    assert out["pct"] == pytest.approx(50.0) and out["resolution_pct"] == pytest.approx(100 / 400)


def _latency_test(rep: int, mix: str, costs: list[float | None], load_fps: float = 60_000.0) -> data.TestData:
    trials = tuple({"call": "measure", "call_args": {"load_fps": load_fps}, "tester_limited": False, "seq": i,
                    "streams": [], "result": {"dut_cost": {"ns_per_frame": c}}} for i, c in enumerate(costs))
    row = {"load": "60kfps", "load_fps": load_fps, "tester_limited_trials": 0, "families": {}}
    return data.TestData(rep, "latency", mix, 128, False, rep, {"params": {"loads": ["60kfps"]}}, {"loads": [row]},
                         trials)


def test_a_latency_test_at_several_mixes_gives_a_cost_verdict():
    """Each trial's cost, its repetition the block, its mix's IPv6 share
    the regressor; a test at one mix, or at loads that differ by mix,
    gives none; a lab that read no CPU gives none either."""
    tests = [_latency_test(k, m, [7700.0 * (1 + 0.01 * share) + 3 * k + j for j in range(2)])
             for k in range(6) for m, share in (("100/0", 0), ("50/50", 0.5), ("0/100", 1))]
    run = data.RunData({"environment": {}}, None, tuple(tests), 0)
    [pair] = [p for p in family_pairs.families(run) if p.metric == "cost per frame [ns]"]
    assert pair.design == "mix regression" and pair.point == "128 B at 60kfps (mixes 100/0, 50/50, 0/100)"
    assert len(pair.observations) == 36 and {s for _, s, _ in pair.observations} == {0.0, 0.5, 1.0}
    _, c = verdicts.of(run)[pair.key]
    assert c.outcome == "differs" and c.diff_pct == pytest.approx(1.0, abs=0.05) and "IPv6 1.0 % more" in c.verdict
    other_load = tests[:-1] + [_latency_test(5, "0/100", [7777.0, 7778.0], load_fps=50_000.0)]
    one_each = [p for p in family_pairs.families(data.RunData({"environment": {}}, None, tuple(other_load), 0))
                if p.metric == "cost per frame [ns]"]
    assert len(one_each[0].observations) == 34 and one_each[0].point.endswith("(mixes 100/0, 50/50, 0/100)")
    unread = tuple(_latency_test(k, m, [None]) for k in range(6) for m in ("100/0", "0/100"))
    assert not [p for p in family_pairs.families(data.RunData({"environment": {}}, None, unread, 0))
                if p.metric == "cost per frame [ns]"]
