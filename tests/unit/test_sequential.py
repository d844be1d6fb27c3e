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


SEQUENTIAL = """
name = "s"
[lab]
topology = "a"
link_speed = "100M"
[matrix]
mixes = ["100/0", "0/100"]
frame_sizes = [128]
repeat = 6
[[test]]
kind = "throughput"
trial_duration_s = 1.0
resolution = 0.02
[[test]]
kind = "latency"
loads = ["10kfps"]
trial_duration_s = 1.0
repeat = 1
[design]
sequential = true
max_blocks = 20
precision_pct = 1.0
"""


def _sequential_run(tmp_path, text=SEQUENTIAL):
    from v6bench.campaign import looks, runner, spec
    from v6bench.campaign import plan as run_order
    from v6bench.methods.simulated import SimulatedTester
    from v6bench.report import data
    from v6bench.store.db import Store

    c = spec.parse_campaign(text, "s.toml")
    store = Store(tmp_path / "r.db")
    plan = run_order.schedule(c, 5)
    design = {**run_order.design_record(c, 5, plan), "sequential": looks.record(c)}
    rid = store.start_run(c.name, "test", {"design": design}, None, c.path, c.sha256, c.text)
    looker = looks.Looker(c, store, rid)
    seed = iter(range(10_000))

    def make(p):  # capacity below the line rate: IPv4 and IPv6 forward alike, IPv6's delay 5 % higher
        return SimulatedTester(50_000, line_fps=84_459.0, buffer_frames=0, seed=next(seed))

    runner.run_points(c, store, rid, make, lambda line: None, plan=plan, looker=looker)
    looker.finish()
    return c, store, data.load(store, rid)


def test_a_sequential_campaign_adds_blocks_only_until_each_test_is_decided(tmp_path):
    """The throughputs are equal in every search: decided within ±1 % at the
    first look (6 blocks). The paired delays differ by about 5 %: blocks
    are added until the signed-rank interval at its look's level excludes
    0, before the maximum of 20. The report states it at that look with
    the sequential p-value, a "differs"."""
    from v6bench.report import verdicts

    c, store, run = _sequential_run(tmp_path)
    blocks = {k: max(t.repetition for t in run.tests if t.kind == k) for k in ("throughput", "latency")}
    assert blocks["throughput"] == 6
    assert 6 < blocks["latency"] < 20
    design = run.run["environment"]["design"]
    assert design["stopped"] == [0, 1] and [e["block"] for e in design["looks"]] == list(range(6, blocks["latency"] + 1))
    decided = {p.metric: c for p, c in verdicts.of(run).values() if p.paired}
    delay = decided["median latency [µs]"]
    assert delay.outcome == "differs" and delay.n_a == blocks["latency"] and 3 < delay.diff_pct < 7
    last = [e["p"] for e in design["looks"] if e["block"] == blocks["latency"]][0]
    p_last = next(v[1] for k, v in last.items() if k.startswith("median latency"))
    assert delay.p == pytest.approx(min(1.0, min(
        v[1] * ALPHA / sequential.Design(6, 20).alpha_at(e["block"]) for e in design["looks"]
        for k, v in e["p"].items() if k.startswith("median latency")))) and delay.p >= p_last


@pytest.mark.parametrize("edit, message", [
    (("max_blocks = 20\n", ""), r"design\.max_blocks: expected the most blocks"),
    (("sequential = true", 'sequential = true\norder = "file"'), r"design\.sequential: a sequential design adds"),
    (("sequential = true", "sequential = false"), r"design\.max_blocks: applies to sequential = true only"),
    (("precision_pct = 1.0", "precision_pct = -1"), r"design\.precision_pct: expected a percentage"),
])
def test_bad_sequential_designs_name_the_field(edit, message):
    from v6bench.campaign import spec
    from v6bench.core.errors import UsageError

    with pytest.raises(UsageError, match=message):
        spec.parse_campaign(SEQUENTIAL.replace(*edit), "s.toml")


def test_a_time_budget_gives_each_test_its_blocks_then_stops_the_undecided_when_time_runs_out(tmp_path, monkeypatch):
    """Each point takes 100 s of a fake clock: blocks 1-6 hold three points
    (300 s), then only the undecided latency test's one (100 s). With a
    2,150-s budget the blocks after the sixth fit while the time left holds
    another as long as the last: the latency test stops after block 9
    (2,100 s spent, 50 s left), recorded as out of budget, and the report
    says so beside each of its comparisons."""
    from v6bench.campaign import looks, runner, spec
    from v6bench.campaign import plan as run_order
    from v6bench.methods.simulated import SimulatedTester
    from v6bench.report import data, verdicts
    from v6bench.store.db import Store

    now = [0.0]
    monkeypatch.setattr(looks.time, "monotonic", lambda: now[0])
    c = spec.parse_campaign(SEQUENTIAL, "s.toml")
    store = Store(tmp_path / "r.db")
    plan = run_order.schedule(c, 5)
    design = {**run_order.design_record(c, 5, plan), "sequential": looks.record(c, 2150.0)}
    rid = store.start_run(c.name, "test", {"design": design}, None, c.path, c.sha256, c.text)
    looker = looks.Looker(c, store, rid)
    seed = iter(range(10_000))

    def make(p):
        now[0] += 100.0
        return SimulatedTester(50_000, line_fps=84_459.0, buffer_frames=0, seed=next(seed))

    runner.run_points(c, store, rid, make, lambda line: None, plan=plan, looker=looker)
    looker.finish()
    run = data.load(store, rid)
    assert max(t.repetition for t in run.tests if t.kind == "latency") == 9
    assert run.run["environment"]["design"]["out_of_budget"] == [1]
    said = {p.metric: c.verdict for p, c in verdicts.of(run).values()}
    assert said["median latency [µs]"].endswith("the time budget ran out before it was decided")
    assert "budget" not in said["throughput NDR [fps]"]


def test_a_budget_needs_a_sequential_design_and_a_duration():
    from v6bench.campaign import runner, spec
    from v6bench.cli.test import budget_s
    from v6bench.core.errors import UsageError

    assert budget_s("2h") == 7200 and budget_s("90m") == 5400 and budget_s("600") == 600 and budget_s("5400s") == 5400
    for bad in ("soon", "10s", "40d"):
        with pytest.raises(UsageError, match="budget"):
            budget_s(bad)
    plain = spec.parse_campaign(SEQUENTIAL.split("[design]")[0], "p.toml")
    with pytest.raises(UsageError, match="needs \\[design\\] sequential = true"):
        runner.check_budget(plain, 3600.0)
