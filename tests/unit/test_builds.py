"""Scenario comparisons take the lab build as their unit, and a throughput
at the line rate is the link's (docs/report.md, "Scenarios: the lab build
is the unit", "Line-limited results"). Every random draw is seeded."""

import numpy as np
import pytest

from v6bench.campaign import plan as run_order
from v6bench.campaign import runner, spec
from v6bench.methods.simulated import SimulatedTester
from v6bench.report import builds, data, samples, verdicts
from v6bench.report.stats import ALPHA
from v6bench.store.db import Store

LOAD = {"load": "20kfps", "load_fps": 20_000.0, "tester_limited_trials": 0, "families": {}}


def _trial(median_ns: float) -> dict:
    streams = [{"name": "ipv4-t1-t2", "ip_version": 4, "latency_ns": {"p50": median_ns, "p99": 2 * median_ns}}]
    return {"call": "measure", "call_args": {"load_fps": 20_000.0}, "tester_limited": False, "streams": streams,
            "result": {"suspect_reasons": [], "dut_cost": {}}}


def _latency_test(k: int, scenario: str, build: str, medians_ns, index: int) -> data.TestData:
    params = {"params": {}, "scenario": scenario, "lab_build": build}
    return data.TestData(k, "latency", "100/0", 128, False, 1, params, {"loads": [LOAD]},
                         tuple(_trial(m) for m in medians_ns), scenario_index=index)


def _aa_run(rng, builds_a_side: int, trials: int, build_sd: float, trial_sd: float, effect: float = 0.0) -> data.RunData:
    """Two scenarios (the second ``effect`` slower) each built ``builds_a_side``
    times; each build's delay level drawn once (sd ``build_sd``, relative),
    its trials around it (sd ``trial_sd``)."""
    tests = []
    for i, (name, factor) in enumerate((("plain-a", 1.0), ("plain-b", 1.0 + effect))):
        for b in range(builds_a_side):
            level = 18_000 * factor * (1 + rng.normal(0, build_sd))
            tests.append(_latency_test(len(tests), name, f"{name}-{b}", level * (1 + rng.normal(0, trial_sd, trials)), i))
    return data.RunData({"environment": {}}, None, tuple(tests), 0)


def _delay(run: data.RunData):
    [(p, c)] = [(p, c) for p, c in verdicts.of(run).values() if p.metric == "median delay [µs]"]
    return p, c


def test_six_trials_of_one_build_a_side_are_not_six_replicates():
    """The issue's case: two identical plain routers, six trials each in one
    lab build, the builds' levels 16.5 and 20.2 µs: compared trial by trial
    this reads as a 22 % difference; with the build as the unit there is
    one value a side and no verdict."""
    rng = np.random.default_rng(5)
    a = _latency_test(0, "plain-a", "x1", 20_200 * (1 + rng.normal(0, 0.01, 6)), 0)
    b = _latency_test(1, "plain-b", "x2", 16_500 * (1 + rng.normal(0, 0.01, 6)), 1)
    p, c = _delay(data.RunData({"environment": {}}, None, (a, b), 0))
    assert len(p.values["plain-a IPv4"]) == 6 and builds.counts(p) == {"plain-a IPv4": 1, "plain-b IPv4": 1}
    assert c.outcome == "few" and c.verdict.startswith("one lab build a side: not enough")
    assert c.p is None and c.ci_low_pct is None
    # The same values taken trial by trial, as before: a confident, false "differs".
    p.builds = {}
    from v6bench.report.stats import compare
    assert compare(p.values["plain-a IPv4"], p.values["plain-b IPv4"], "location").p < 0.01


def test_too_few_builds_say_how_many():
    rng = np.random.default_rng(6)
    _, c = _delay(_aa_run(rng, 3, 4, 0.1, 0.01))
    assert c.outcome == "few" and c.verdict == "not enough lab builds (3 and 3; a verdict needs 5 a side)"


def test_builds_collapse_to_their_median_or_mean():
    p = samples.Pair("m", "pt", "slower", "location", "A", "B")
    for x, b in ((1.0, "a1"), (3.0, "a1"), (10.0, "a1"), (5.0, "a2")):
        p.add("A", x, b)
    p.add("B", 2.0, "b1")
    assert builds.collapsed(p).values == {"A": [3.0, 5.0], "B": [2.0]}
    m = samples.Pair("m", "pt", "higher", "mean", "A", "B")
    for x, b in ((1.0, "a1"), (3.0, "a1"), (10.0, "a1")):
        m.add("A", x, b)
    assert builds.collapsed(m).values == {"A": [pytest.approx(14 / 3)]}


def test_identical_scenarios_over_builds_claim_a_difference_at_most_at_the_level():
    """A/A by seeded simulation: 400 runs of two identical scenarios, 5
    builds a side of 6 trials, the builds' level varying 10 % and trials
    1 % around it. With the build as the unit at most α of the runs say
    "differs" (a margin of three binomial standard errors: 400 × 0.05 =
    20 expected, 33 allowed); trial by trial, as before, more than six
    times as many did (182 of 400 with this seed)."""
    rng = np.random.default_rng(2026)
    built = trialwise = 0
    from v6bench.report.stats import compare
    for _ in range(400):
        p, c = _delay(_aa_run(rng, 5, 6, 0.10, 0.01))
        built += c.outcome == "differs"
        trialwise += compare(p.values["plain-a IPv4"], p.values["plain-b IPv4"], "location").p < ALPHA
    assert built <= 400 * ALPHA + 3 * (400 * ALPHA * (1 - ALPHA)) ** 0.5
    assert trialwise > 6 * 400 * ALPHA


def test_a_real_difference_between_scenarios_is_found_over_builds():
    rng = np.random.default_rng(7)
    found = sum(_delay(_aa_run(rng, 6, 4, 0.03, 0.01, effect=0.20))[1].outcome == "differs" for _ in range(20))
    assert found >= 18


def test_the_same_scenario_measured_in_one_lab_is_compared_as_before():
    """Two network types of one scenario (IPv4 and IPv6 in one lab) carry
    no builds: their trials are compared as they are."""
    p = samples.Pair("m", "pt", "slower", "location", "A", "B")
    for x in (1.0, 2.0):
        p.add("A", x)
    assert p.builds == {} and builds.too_few(p) is None


def _throughput(k: int, family: int, ndr_fps: float, line_fps: float, scenario: str = "", build: str = "",
                index: int = 0) -> data.TestData:
    goal = {"fps": ndr_fps, "is_lower_bound": False, "upper_fps": None if ndr_fps >= line_fps else ndr_fps * 1.01}
    params = {"params": {"resolution": 0.01}, **({"scenario": scenario, "lab_build": build} if scenario else {})}
    return data.TestData(k, "throughput", "100/0" if family == 4 else "0/100", 128, False, 1, params,
                         {"ndr": goal, "pdr": goal, "ndr_fps": ndr_fps, "pdr_fps": ndr_fps, "line_fps": line_fps}, (),
                         scenario_index=index)


def _ndr(run: data.RunData, name_b: str = "IPv6"):
    return next(c for p, c in verdicts.of(run).values() if p.metric == "throughput NDR [fps]" and p.name_b == name_b)


@pytest.mark.parametrize("v4, v6", [
    ([84_459.0] * 5, [84_459.0] * 5),                          # both at the line rate: the demo's 100 Mb/s links
    ([84_459.0] * 5, [60_000.0 + 100 * i for i in range(5)]),   # one family at it: still no verdict on the router
    ([84_459.0, 84_000.0, 84_459.0, 84_200.0, 84_459.0], [84_459.0] * 5),  # within the resolution of it
])
def test_a_throughput_at_the_line_rate_is_the_links_and_draws_no_verdict(v4, v6):
    tests = [_throughput(i, 4, x, 84_459.0) for i, x in enumerate(v4)] + \
            [_throughput(10 + i, 6, x, 84_459.0) for i, x in enumerate(v6)]
    c = _ndr(data.RunData({"environment": {}}, None, tuple(tests), 0))
    assert c.outcome == "line" and c.p is None and "no difference" not in c.verdict
    assert c.verdict.startswith("line-limited (") and "no verdict on the router" in c.verdict


def test_a_throughput_below_the_line_rate_is_compared():
    tests = [_throughput(i, 4, 50_000.0 + 10 * i, 84_459.0) for i in range(5)] + \
            [_throughput(10 + i, 6, 40_000.0 + 10 * i, 84_459.0) for i in range(5)]
    c = _ndr(data.RunData({"environment": {}}, None, tuple(tests), 0))
    assert c.outcome == "differs" and c.diff_pct == pytest.approx(-20.0, abs=0.1)
    assert not samples.at_line_rate(None, 84_459.0, 0.01) and not samples.at_line_rate(84_459.0, None, 0.01)


def test_a_scenario_against_a_line_rate_reference_is_line_limited():
    tests = [_throughput(i, 4, 84_459.0, 84_459.0, "plain", f"p{i}", 0) for i in range(5)] + \
            [_throughput(10 + i, 4, 30_000.0 + i, 84_459.0, "acl", f"a{i}", 1) for i in range(5)]
    c = _ndr(data.RunData({"environment": {}}, None, tuple(tests), 0), "acl")
    assert c.outcome == "line" and "plain 5 of 5" in c.verdict


SCENARIOS = """
name = "t"
[lab]
topology = "a"
link_speed = "100M"
[matrix]
mixes = ["100/0"]
frame_sizes = [128]
repeat = 4
[[test]]
kind = "throughput"
trial_duration_s = 1.0
resolution = 0.02
[[scenario]]
name = "plain"
[[scenario]]
name = "nat"
dut = { nat44 = true }
"""


def test_each_block_builds_each_scenario_anew():
    """Where a block ends with the scenario the next begins with, the
    visits still part there: a visit is one block's build of a scenario."""
    c = spec.parse_campaign(SCENARIOS, "s.toml")
    for seed in range(20):
        plan = run_order.schedule(c, seed)
        visits = run_order.visits(plan, set())
        assert len(visits) == 8 and all(len({p.repetition for p in pts}) == 1 for _, pts in visits)
    one = spec.parse_campaign(SCENARIOS.split("[[scenario]]")[0], "o.toml")
    assert len(run_order.visits(run_order.schedule(one, 1), set())) == 1  # one lab: kept over the blocks


def test_each_visit_stores_its_lab_build(tmp_path):
    c = spec.parse_campaign(SCENARIOS, "s.toml")
    store = Store(tmp_path / "r.db")
    plan = run_order.schedule(c, 3)
    rid = store.start_run(c.name, "test", {"design": run_order.design_record(c, 3, plan)}, None, c.path, c.sha256,
                          c.text)

    def make(p):
        return SimulatedTester(50_000, line_fps=84_459.0, buffer_frames=0, recovery_s=0.2, seed=1)

    for n, (_, points) in enumerate(run_order.visits(plan, set())):
        runner.run_points(c, store, rid, make, lambda line: None, points=points, plan=plan, lab_build=f"b{n}")
    run = data.load(store, rid)
    assert sorted({(t.scenario, t.repetition, t.lab_build) for t in run.tests}) == \
        sorted({(sc, p.repetition, f"b{n}") for n, (sc, pts) in enumerate(run_order.visits(plan, set())) for p in pts})
    assert len({t.lab_build for t in run.tests}) == 8
