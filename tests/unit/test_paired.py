"""Family comparisons inside one trial (docs/report.md, "Paired
comparisons"): a latency test runs IPv4 and IPv6 in every trial by
default, starts at the lower of the families' throughputs, and the
report compares each trial's IPv6 delay with its own IPv4 delay."""

import pytest

from v6bench.campaign import runner, spec
from v6bench.core.frames import Mix, paired_mixes, parse_mix
from v6bench.report import data, scenario_pairs, verdicts
from v6bench.methods.simulated import SimulatedTester
from v6bench.store.db import Store

V4, V6, BOTH = Mix(100, 0), Mix(0, 100), Mix(50, 50)

CAMPAIGN = """name = "t"
[lab]
topology = "a"
link_speed = "100M"
[matrix]
mixes = ["100/0", "0/100"]
frame_sizes = [128]
repeat = 5
[[test]]
kind = "throughput"
trial_duration_s = 1.0
resolution = 0.02
[[test]]
kind = "latency"
loads = ["throughput", "10kfps"]
trial_duration_s = 1.0
repeat = 2
"""


@pytest.mark.parametrize("given,paired", [
    ((V4, V6), (BOTH,)),
    ((V6, V4), (BOTH,)),
    ((V4, Mix(90, 10), V6), (BOTH, Mix(90, 10))),
    ((V4, BOTH, V6), (BOTH,)),
    ((V4,), (V4,)),  # one family: nothing to pair
    ((V4, Mix(90, 10)), (V4, Mix(90, 10))),
])
def test_the_pure_mixes_become_one_mixed_mix(given, paired):
    assert paired_mixes(given) == paired


def test_a_latency_test_pairs_the_families_unless_told_otherwise():
    def mixes(keys: str) -> list[tuple[str, ...]]:
        c = spec.parse_campaign(CAMPAIGN + keys, "t.toml")
        return [tuple(map(str, t.matrix.mixes)) for t in c.tests]

    assert mixes("") == [("100/0", "0/100"), ("50/50",)]
    assert mixes('families = "separate"\n') == [("100/0", "0/100"), ("100/0", "0/100")]
    with pytest.raises(Exception, match=r"test\[1\]\.families: 'both' is not one of paired, separate"):
        mixes('families = "both"\n')


def _run(tmp_path, text: str) -> data.RunData:
    """The campaign on a simulated DUT (IPv6 5 % slower than IPv4, 0-10 % jitter a stream), a tester per point
    sending the point's families."""
    c = spec.parse_campaign(text, "t.toml")
    store = Store(tmp_path / "r.db")
    rid = store.start_run(c.name, "test", {"kernel": "x"}, None, c.path, c.sha256, c.text)

    def tester(p):
        return SimulatedTester(50_000, line_fps=84_459.0, families=tuple(v for v, pct in ((4, p.mix.ipv4_pct), (6, p.mix.ipv6_pct)) if pct),
                               seed=p.repetition)

    runner.run_points(c, store, rid, tester, lambda s: None)
    return data.load(store, rid)


def test_a_paired_run_starts_at_the_lower_throughput_and_compares_trial_by_trial(tmp_path):
    run = _run(tmp_path, CAMPAIGN)
    lat = run.of("latency")
    assert {t.mix for t in lat} == {"50/50"} and len(lat) == 5
    ndr = {(t.repetition, t.mix): t.result["ndr_fps"] for t in run.of("throughput")}
    for t in lat:
        assert t.result["throughput_from"] == "the lower of IPv4's and IPv6's, measured earlier in this run"
        assert t.result["throughput_fps"] == min(ndr[(t.repetition, "100/0")], ndr[(t.repetition, "0/100")])
    decided = {(p.metric, p.point): (p, c) for p, c in verdicts.of(run).values() if p.paired}
    assert {m for m, _ in decided} == {"median latency [µs]", "p99 latency [µs]"} and len(decided) == 4
    for (metric, point), (p, c) in decided.items():
        assert (c.design, c.n_a, c.n_b, c.test) == ("paired", 10, 10, "Wilcoxon signed-rank"), (metric, point)
        assert "50/50" in point
    # The simulated IPv6 is 5 % slower, each stream with up to 10 % jitter of its own: at the throughput the
    # interval (uncorrected) excludes 0 and holds +5 %.
    at_ndr = next(c for (m, point), (_, c) in decided.items() if m.startswith("median") and "at throughput" in point)
    assert 0 < at_ndr.ci_low_pct < 5 < at_ndr.ci_high_pct, at_ndr


def test_a_mixed_mix_without_both_families_measured_searches_its_own_throughput(tmp_path):
    run = _run(tmp_path, CAMPAIGN.replace('kind = "throughput"\n', 'kind = "throughput"\nmixes = ["100/0"]\n'))
    for t in run.of("latency"):
        assert t.result["throughput_from"] == "searched for this test"


def test_separate_families_compare_across_trials(tmp_path):
    run = _run(tmp_path, CAMPAIGN + 'families = "separate"\n')
    compared = [(p, c) for p, c in verdicts.of(run).values() if p.metric == "median latency [µs]"]
    assert compared and all(not p.paired and c.design == "unpaired" for p, c in compared)
    assert parse_mix("50/50") == BOTH


def test_two_flows_a_family_give_an_aa_control_inside_each_trial():
    """``flows = 2``: per family, flow 2's median and p99 against flow 1's,
    trial by trial, corrected among the A/A controls; the families'
    comparison takes both flows of each."""
    rng = __import__("numpy").random.default_rng(5)

    def trial(level_ns):
        streams = [{"name": f"ipv{v}-t1-t2{'-flow2' if k == 2 else ''}", "ip_version": v,
                    "latency_ns": {"p50": p, "p99": 2 * p}}
                   for v in (4, 6) for k in (1, 2) for p in [level_ns * (1.01 if v == 6 else 1) * (1 + rng.normal(0, 1e-3))]]
        return {"call": "measure", "call_args": {"load_fps": 1000.0}, "tester_limited": False, "streams": streams,
                "result": {"suspect_reasons": []}}

    trials = tuple(trial(15_000 if i % 2 else 20_000) for i in range(10))
    row = {"load": "1kfps", "load_fps": 1000.0, "tester_limited_trials": 0, "families": {}}
    t = data.TestData(0, "latency", "50/50", 128, False, 0, {"params": {}, "flows": 2}, {"loads": [row]}, trials)
    run = data.RunData({"environment": {}}, None, (t,), 0)
    decided = verdicts.of(run)
    controls = [(p, c) for p, c in decided.values() if p.control]
    assert len(controls) == 4 and {p.point for p, _ in controls} == {"×2 flows 128 B at 1kfps (50/50) IPv4",
                                                                      "×2 flows 128 B at 1kfps (50/50) IPv6"}
    assert all((p.name_a, p.name_b, c.design, c.family, c.n_a) == ("flow 1", "flow 2", "paired", "controls", 10)
               and c.outcome == "none" for p, c in controls)
    [median] = [c for p, c in decided.values() if p.metric == "median latency [µs]" and not p.control]
    assert median.outcome == "differs" and median.diff_pct == pytest.approx(1.0, abs=0.1)


def test_a_scenario_on_the_second_flow_is_compared_with_its_control_in_the_same_trials():
    """A test that stored ``flow2`` (a DUT scenario or extension headers
    scoped to flow 2, here IPv6's +hbh costing 3 %): IPv6's flow 2 against
    its flow 1 is that scenario against its control (paired, corrected
    with the report's comparisons, not among the controls) and is found;
    IPv4's two flows stay an A/A control and find nothing; the report
    puts them in a table of their own."""
    from v6bench.report.views import compare

    rng = __import__("numpy").random.default_rng(7)

    def trial(level_ns):
        streams = [{"name": f"ipv{v}-t1-t2{'-flow2' if k == 2 else ''}", "ip_version": v,
                    "latency_ns": {"p50": p, "p99": 2 * p}}
                   for v in (4, 6) for k in (1, 2)
                   for p in [level_ns * (1.03 if (v, k) == (6, 2) else 1) * (1 + rng.normal(0, 1e-3))]]
        return {"call": "measure", "call_args": {"load_fps": 1000.0}, "tester_limited": False, "streams": streams,
                "result": {"suspect_reasons": []}}

    trials = tuple(trial(15_000 if i % 2 else 20_000) for i in range(10))
    row = {"load": "1kfps", "load_fps": 1000.0, "tester_limited_trials": 0, "families": {}}
    params = {"params": {}, "flows": 2, "ext_headers": "hbh", "ext_headers_scope": "flow2", "flow2": {"6": "+hbh"}}
    t = data.TestData(0, "latency", "50/50", 128, False, 0, params, {"loads": [row]}, trials)
    run = data.RunData({"environment": {}}, None, (t,), 0)
    decided = verdicts.of(run)
    flows = {(p.metric, p.point[-4:]): (p, c) for p, c in decided.values() if p.name_a == "flow 1"}
    p6, c6 = flows["median latency [µs]", "IPv6"]
    assert (p6.name_b, p6.control, c6.design, c6.family) == ("flow 2: +hbh", False, "paired", "report")
    assert c6.outcome == "differs" and c6.diff_pct == pytest.approx(3.0, abs=0.1)
    p4, c4 = flows["median latency [µs]", "IPv4"]
    assert (p4.name_b, p4.control, c4.outcome) == ("flow 2", True, "none")
    # IPv4 against IPv6 on their flows 1, both native: the header on IPv6's flow 2 is not IPv6's cost.
    [(pf, cf)] = [(p, c) for p, c in decided.values() if p.name_a == "IPv4" and p.metric == "median latency [µs]"]
    assert pf.point.endswith("flow 1 of each family") and cf.outcome == "none" and abs(cf.diff_pct) < 0.2, cf
    section = compare.comparisons(run)
    ids = [b.id for b in section.blocks if hasattr(b, "id")]
    assert "flow-scenarios" in ids and "flow-controls" in ids
    [scoped] = [b for b in section.blocks if getattr(b, "id", "") == "flow-scenarios"]
    assert {r[2] for r in scoped.rows} == {"+hbh"} and len(scoped.rows) == 2
    # Two scenarios on a flow are compared inside their trials, not with each other across trials.
    other = data.TestData(1, "latency", "50/50", 128, False, 0, {**params, "scenario": "other"}, {"loads": [row]}, trials,
                          scenario_index=1)
    t = data.TestData(0, "latency", "50/50", 128, False, 0, {**params, "scenario": "first"}, {"loads": [row]}, trials)
    assert scenario_pairs.network_types(data.RunData({"environment": {}}, None, (t, other), 0)) == []
    plain = [data.TestData(k, "latency", "50/50", 128, False, 0, {"params": {}, "flows": 2, "scenario": n},
                           {"loads": [row]}, trials, scenario_index=k) for k, n in enumerate(("first", "other"))]
    assert scenario_pairs.network_types(data.RunData({"environment": {}}, None, tuple(plain), 0))  # unscoped: compared


def test_network_types_compare_the_duts_cost_per_frame_across_trials_too():
    """Seed 003's network types (one family a trial) against native IPv4
    in cost per frame as in delay: a NAT costing 10 % more CPU a frame at
    the same delay is found in cost, not in delay; a mixed trial gives a
    family's cost only from its runs (``by_family``), never the trial's
    both-family figure; a lab that reads no CPU gives no cost pair. Each
    scenario is built six times, two trials a build (the unit is the
    build, report/builds.py)."""
    rng = __import__("numpy").random.default_rng(11)
    row = {"load": "1%", "load_fps": 845.0, "tester_limited_trials": 0, "families": {}}

    def trial(v, cost_ns, by_family=None):
        streams = [{"name": f"ipv{v}-t1-t2", "ip_version": v, "latency_ns": {"p50": 20_000 * (1 + rng.normal(0, 1e-3)),
                                                                               "p99": 40_000}}]
        cost = {"ns_per_frame": None if cost_ns is None else cost_ns * (1 + rng.normal(0, 5e-3)),
                "by_family": by_family}
        return {"call": "measure", "call_args": {"load_fps": 845.0}, "tester_limited": False, "streams": streams,
                "result": {"suspect_reasons": [], "dut_cost": cost}}

    def test(k, scenario, cost_ns, v=4, build=0):
        mix = "100/0" if v == 4 else "0/100"
        return data.TestData(10 * k + build, "latency", mix, 128, False, build + 1,
                             {"params": {}, "scenario": scenario, "lab_build": f"{scenario}-{build}"},
                             {"loads": [row]}, tuple(trial(v, cost_ns) for _ in range(2)), scenario_index=k)

    def built(scenario_a, scenario_b, cost_a, cost_b):
        return tuple(test(k, sc, cost, build=b) for k, (sc, cost) in enumerate(((scenario_a, cost_a), (scenario_b, cost_b)))
                     for b in range(6))

    run = data.RunData({"environment": {}}, None, built("ipv4", "ipv4-nat", 9000.0, 9900.0), 0)
    decided = {p.metric: c for p, c in verdicts.of(run).values() if p.name_b.startswith("ipv4-nat")}
    assert decided["cost per frame [ns]"].outcome == "differs"
    assert decided["cost per frame [ns]"].diff_pct == pytest.approx(10.0, abs=1.0)
    assert decided["median delay [µs]"].outcome == "none"
    blind = data.RunData({"environment": {}}, None, built("ipv4", "ipv4-nat", None, None), 0)
    assert [p.metric for p in scenario_pairs.network_types(blind)] == ["median delay [µs]"]
    assert scenario_pairs.network_type_cost_ns(trial(4, 9000.0), 4, one_family=False) is None
    assert scenario_pairs.network_type_cost_ns(trial(4, 9000.0, {"4": 8800.0, "6": 9100.0}), 6, one_family=False) == 9100.0


def test_a_scenario_is_compared_with_the_one_it_names_where_that_ran_the_test():
    """``compare_with`` (campaign/spec.py): a scenario on another lab is
    compared with its own reference, not with the run's first; where the
    named one ran no test of the kind, the first of those that did is the
    reference; an A/A control still pairs with what it controls."""
    row = {"load": "10kfps", "load_fps": 1e4, "tester_limited_trials": 0, "families": {}}

    def trial():
        streams = [{"name": "ipv4-t1-t2", "ip_version": 4, "latency_ns": {"p50": 20_000, "p99": 40_000}}]
        return {"call": "measure", "call_args": {"load_fps": 1e4}, "tester_limited": False, "streams": streams,
                "result": {"suspect_reasons": []}}

    def test(k, name, **params):
        return data.TestData(k, "latency", "100/0", 128, False, 0, {"params": {}, "scenario": name, **params},
                             {"loads": [row]}, (trial(),), scenario_index=k)

    tests = (test(0, "native"), test(1, "native-b"), test(2, "xlat", compare_with="native-b"),
             test(3, "again", control_of="native"), test(4, "lone", compare_with="absent"))
    refs = scenario_pairs._reference(list(tests))
    assert refs == {"native": "native", "native-b": "native", "xlat": "native-b", "again": "native", "lone": "native"}
    pairs = {(p.name_a, p.name_b) for p in scenario_pairs.network_types(data.RunData({"environment": {}}, None, tests, 0))}
    assert ("native-b IPv4", "xlat IPv4") in pairs and not any(b.startswith("xlat") and a.startswith("native IPv4")
                                                             for a, b in pairs), pairs


def test_a_delay_measured_where_the_dut_lost_frames_says_so():
    """RFC 2544 §26.2 measures latency at the throughput: where the DUT lost
    frames in a compared trial, the load was beyond it. The verdict
    stands and names the series, its lossy trials and the worst loss; the
    latency table shows each family's worst trial; no loss, no caveat."""
    from v6bench.report.views.latency import latency

    rng = __import__("numpy").random.default_rng(13)

    def trial(i, lost_v6):
        streams = [{"name": f"ipv{v}-t1-t2", "ip_version": v, "tx_frames": 10_000,
                    "lost_frames": lost_v6 if v == 6 else 0,
                    "latency_ns": {"p50": p, "p99": 2 * p, "mean": p, "min": p / 2, "max": 3 * p, "p999": 3 * p}}
                   for v in (4, 6) for p in [20_000 * (1.2 if v == 6 else 1) * (1 + rng.normal(0, 1e-3))]]
        return {"call": "measure", "call_args": {"load_fps": 1000.0}, "tester_limited": False, "streams": streams,
                "result": {"suspect_reasons": []}}

    def run(losses):
        row = {"load": "1kfps", "load_fps": 1000.0, "tester_limited_trials": 0, "families": {}}
        t = data.TestData(0, "latency", "50/50", 128, False, 0, {"params": {}}, {"loads": [row]},
                          tuple(trial(i, lost) for i, lost in enumerate(losses)))
        return data.RunData({"environment": {}}, None, (t,), 0)

    lossy = run([0] * 7 + [12, 3_400, 50])
    [(p, c)] = [(p, c) for p, c in verdicts.of(lossy).values() if p.metric == "median latency [µs]"]
    assert c.outcome == "differs" and p.lossy == {"IPv6": [0.0012, 0.34, 0.005]}
    assert c.verdict.startswith("IPv6 19.9 % slower, differs") and \
        "the DUT lost frames: IPv6 in 3 trials (up to 34 %)" in c.verdict and "RFC 2544 §26.2" in c.verdict
    [table] = [b for b in latency(lossy).blocks if getattr(b, "id", "") == "latency"]
    column = table.columns.index("DUT loss, worst trial [%]")
    assert {r[5]: r[column] for r in table.rows} == {"IPv4": 0.0, "IPv6": pytest.approx(34.0)}
    [(p, c)] = [(p, c) for p, c in verdicts.of(run([0] * 10)).values() if p.metric == "median latency [µs]"]
    assert not p.lossy and "lost" not in c.verdict
