"""A campaign's plan before the start (campaign/estimate.py, ``v6bench run
FILE --plan``): points and trials from the file, what a trial and a lab
build cost from this machine's earlier runs, fallbacks without them."""

import pytest

from v6bench import selftest
from v6bench.campaign import estimate, spec
from v6bench.campaign import plan as run_order
from v6bench.cli import render
from v6bench.store.db import Store
from v6bench.trial import settle

CAMPAIGN = """
name = "p"
[lab]
topology = "a"
link_speed = "1G"
[matrix]
mixes = ["100/0", "0/100"]
frame_sizes = [128, 1518]
repeat = 5
drain_s = 0.5
[[test]]
kind = "throughput"
trial_duration_s = 2.0
resolution = 0.01
[[test]]
kind = "latency"
loads = ["10kfps", "10%"]
trial_duration_s = 3.0
families = "separate"
repeat = 2
[[scenario]]
name = "plain"
[[scenario]]
name = "acl"
dut = { acl = 25 }
"""


def test_without_history_the_plan_counts_points_and_trials_from_the_file():
    c = spec.parse_campaign(CAMPAIGN, "p.toml")
    p = estimate.plan(c, estimate.History(), selftests=1)
    thr, lat = p.tests
    assert thr.points == lat.points == 2 * 2 * 2 * 5  # scenarios × mixes × sizes × blocks
    assert thr.trials == pytest.approx(2 * (7 + 2) * estimate.STEP_SHARE["throughput"]) and thr.trials_most == 2 * 30  # two goals to 1 %
    assert lat.trials == lat.trials_most == 2 * 2  # repeat × loads
    assert thr.seconds_a_trial == pytest.approx(2.0 + 0.5 + estimate.FALLBACK_TRIAL_S)
    assert sum(b.count for b in p.builds) == len(run_order.visits([q for q in run_order.schedule(c, 0)], set())) == 10
    assert p.builds == (estimate.BuildPlan("ns", 10, estimate.FALLBACK_BUILD_S["ns"], False),)
    assert p.seconds == pytest.approx(thr.seconds + lat.seconds + 10 * estimate.FALLBACK_BUILD_S["ns"]
                                      + estimate.FALLBACK_SELFTEST_S_A_SIZE * len(set(c.selftest_frame_sizes)))
    text = render.plan(c, p, "r.db")
    assert "estimated wall time:" in text and "no earlier run on this machine" in text
    assert "lab builds: 10, 60 s (10 × ns 6 s (guessed))" in text


def _stored_run(store, here, test_s: float, trials: int, duration_s: float, drain_s: float, kind: str = "throughput",
                lab: dict | None = None, settle_s: float | None = None):
    rid = store.start_run("old", "test", {**here, "time_s": {"wall": 100.0, "lab up and down": 12.0},
                                          **({"lab": lab} if lab else {})}, None, "o.toml", "x", "")
    for i in range(4):
        tid = store.insert_test({"run_id": rid, "point_key": f"0:{kind}:100/0:128:uni:{i}", "kind": kind, "mix": "100/0",
                                 "frame_size": 128, "bidirectional": 0, "repetition": i + 1,
                                 "params": {"params": {"search": "binary", "resolution": 0.01}, "drain_s": drain_s,
                                            "lab_build": f"b{i % 2}",
                                            **({"settle_s": settle_s} if settle_s is not None else {})},
                                 "status": "done", "started_at_unix_s": 1000.0, "finished_at_unix_s": 1000.0 + test_s})
        for seq in range(trials):
            store.insert_trial({"test_id": tid, "seq": seq, "call": "measure", "call_args": {}, "duration_s": duration_s,
                                "tester_limited": 0, "recorded_at_unix_s": 1000.0, "intended_fps": 1.0,
                                "offered_fps": 1.0, "tx_frames": 1, "rx_frames": 1, "lost_frames": 0, "loss_ratio": 0.0,
                                "streams": [], "extra": {}})
    store.finish_run(rid, "finished")


def test_history_gives_the_trials_a_search_took_and_what_a_trial_costs_beyond_its_traffic(tmp_path):
    here = selftest.machine()
    with Store(tmp_path / "r.db") as store:
        # Four searches of 6 trials of 2 s, each test 21 s: 12 s of traffic, 1.5 s a trial more (drain included).
        _stored_run(store, here, 21.0, 6, 2.0, 0.5)
        other = {**here, "host": {**(here.get("host") or {}), "model_name": "another CPU"}}
        _stored_run(store, other, 99.0, 20, 2.0, 0.5)  # another machine: not read
        h = estimate.history(store, here)
    assert h.runs == 1 and h.trials == {"throughput search=binary resolution=0.01": 6.0}
    assert h.overhead_s == pytest.approx(1.5) and h.build_s == pytest.approx(6.0)  # 12 s over two builds
    c = spec.parse_campaign(CAMPAIGN, "p.toml")
    thr, lat = estimate.plan(c, h, selftests=0).tests
    assert thr.trials == 6.0 and thr.from_history and thr.seconds_a_trial == pytest.approx(2.0 + 1.5)
    assert lat.trials == 4 and not lat.from_history  # a latency test's trials follow from its parameters
    assert estimate.point_seconds(estimate.plan(c, h, 0))[0] == pytest.approx(6 * 3.5)


def test_a_settle_other_than_the_engines_default_moves_what_a_trial_costs_with_or_without_history(tmp_path):
    """make demo settles 0.1 s after learning (campaigns/quick.toml), the
    engine's default is 0.5 s: 0.4 s less a trial, in its plan and in what
    its run tells the plans of campaigns that keep the default."""
    c = spec.parse_campaign(CAMPAIGN, "p.toml")
    quick = spec.parse_campaign(CAMPAIGN.replace("drain_s = 0.5", "drain_s = 0.5\nsettle_s = 0.1"), "p.toml")
    thr, thr_quick = estimate.plan(c, estimate.History(), 0).tests[0], estimate.plan(quick, estimate.History(), 0).tests[0]
    assert thr.seconds_a_trial - thr_quick.seconds_a_trial == pytest.approx(0.4)
    here = selftest.machine()
    with Store(tmp_path / "r.db") as store:
        _stored_run(store, here, 21.0, 6, 2.0, 0.5, settle_s=0.1)  # 1.5 s a trial beyond its traffic, settling 0.1 s
        h = estimate.history(store, here)
    assert h.overhead_s == pytest.approx(1.9)  # at the default settle
    latency = [t for t in (estimate.plan(c, h, 0).tests[1], estimate.plan(quick, h, 0).tests[1])]
    assert [t.seconds_a_trial for t in latency] == pytest.approx([3.0 + 1.9, 3.0 + 1.5])


def test_a_test_that_sets_no_settle_is_planned_at_the_settle_its_trials_will_have(monkeypatch):
    """``$V6BENCH_SETTLE_S`` gives the trials that set no settle theirs (trial/settle.py): the plan counts it
    too, where it counted the engine's 0.5 s; a test that sets its own keeps it."""
    c = spec.parse_campaign(CAMPAIGN, "p.toml")
    own = spec.parse_campaign(CAMPAIGN.replace("drain_s = 0.5", "drain_s = 0.5\nsettle_s = 0.3"), "p.toml")
    monkeypatch.delenv(settle.ENV, raising=False)
    before = [estimate.plan(x, estimate.History(), 0).tests[0].seconds_a_trial for x in (c, own)]
    monkeypatch.setenv(settle.ENV, "0.1")
    after = [estimate.plan(x, estimate.History(), 0).tests[0].seconds_a_trial for x in (c, own)]
    assert before[0] - after[0] == pytest.approx(0.4) and after[1] == pytest.approx(before[1])


def test_a_sequential_design_plans_its_given_blocks_and_at_most_its_maximum():
    c = spec.parse_campaign(CAMPAIGN + "[design]\nsequential = true\nmax_blocks = 12\n", "p.toml")
    thr, _ = estimate.plan(c, estimate.History(), 0).tests
    assert thr.points == 40 and thr.points_most == 2 * 2 * 2 * 12


def test_a_dut_that_keeps_state_adds_the_preliminary_phase_before_each_trial():
    """RFC 9693's preliminary phase opens every stream's connections at its
    rate before each trial (trial/preliminary.py): 10,000 connections of
    each of a 50/50 mix's two flows a family at 10,000 frames/s is 4 s,
    plus the engine's lead; nothing through a DUT that keeps no state, or
    with fixed ports."""
    from v6bench.core.frames import Mix
    from v6bench.lab.model.dut import DutConfig
    from v6bench.trial.execute import ENGINE_LEAD_S

    text = CAMPAIGN.replace('families = "separate"', "flows = 2").replace('mixes = ["100/0", "0/100"]', 'mixes = ["50/50"]')
    c = spec.parse_campaign(text, "p.toml")
    lat = c.tests[1]
    assert estimate.preliminary_s(lat, Mix(50, 50), DutConfig(nat44=True).keeps_state) == pytest.approx(4.0 + ENGINE_LEAD_S)
    assert estimate.preliminary_s(lat, Mix(50, 50), DutConfig().keeps_state) == 0.0
    fixed = spec.parse_campaign(text.replace("flows = 2", 'flows = 2\nports = "fixed"'), "p.toml")
    assert estimate.preliminary_s(fixed.tests[1], Mix(50, 50), DutConfig(nat44=True).keeps_state) == 0.0
    with_nat = spec.parse_campaign(text.replace('dut = { acl = 25 }', 'dut = { nat44 = true }'), "p.toml")
    plain, nat = estimate.plan(c, estimate.History(), 0).tests[1], estimate.plan(with_nat, estimate.History(), 0).tests[1]
    assert nat.seconds_a_trial - plain.seconds_a_trial == pytest.approx((4.0 + ENGINE_LEAD_S) / 2)  # half its points


def test_a_build_is_planned_at_what_builds_of_its_table_took_here_else_guessed_from_the_table_s_size(tmp_path):
    """fib-scale's builds load tables of 10 k to 2 M prefixes: a build's time
    is that of its kind (lab and table) as this machine's runs recorded it
    build by build (``lab_builds_s``), else an older run's mean build plus
    the table's prefixes at the fallback rate."""
    here = selftest.machine()
    text = CAMPAIGN.replace('dut = { acl = 25 }', 'dut = { table = "1m" }').replace('name = "plain"', 'name = "plain"\ndut = { table = "10k" }')
    c = spec.parse_campaign(text.replace("[[scenario]]\nname = \"acl\"", "[[scenario]]\nname = \"big\""), "p.toml")
    guess = estimate.plan(c, estimate.History(build_s=2.0), 0)
    ns, one_m = 2.0, 2.0 + estimate.FALLBACK_TABLE_S_PER_PREFIX * 2_000_000
    assert {b.key: (b.count, b.seconds_each, b.from_history) for b in guess.builds} == {
        "ns table 10k": (5, pytest.approx(ns + estimate.FALLBACK_TABLE_S_PER_PREFIX * 20_000), False),
        "ns table 1m": (5, pytest.approx(one_m), False)}
    with Store(tmp_path / "r.db") as store:
        rid = store.start_run("old", "test", {**here, "lab_builds_s": {"ns table 1m": [40.0, 44.0, 90.0]}}, None,
                              "o.toml", "x", "")
        store.finish_run(rid, "finished")
        h = estimate.history(store, here)
    assert h.builds_s == {"ns table 1m": 44.0} and h.build_s is None
    p = estimate.plan(c, h, 0)
    assert {b.key: (b.seconds_each, b.from_history) for b in p.builds}["ns table 1m"] == (44.0, True)
    assert p.build_s_by_scenario["big"] == 44.0 and p.builds_s == pytest.approx(5 * 44.0 + 5 * p.build_s_by_scenario["plain"])


def test_a_vm_build_without_history_of_its_own_is_not_guessed_from_older_namespace_builds():
    """Older runs' mean build (``build_s``) mixes kinds, most of them namespace labs of seconds: a VM's
    build with no history is the VM's fallback, or this machine's plain VM builds under a table."""
    h = estimate.History(build_s=0.4)
    assert estimate.build_guess_s("ns", h) == 0.4
    assert estimate.build_guess_s("vm", h) == estimate.FALLBACK_BUILD_S["vm"]
    h = estimate.History(build_s=0.4, builds_s={"vm": 14.0})
    assert estimate.build_guess_s("vm table 10k", h) == pytest.approx(14.0 + estimate.FALLBACK_TABLE_S_PER_PREFIX * 20_000)


def _with_connections(params: str):
    """:data:`CAMPAIGN` with NAT44 on its second scenario and a third test, RFC 9693's at 1 % with ``params``."""
    return spec.parse_campaign(CAMPAIGN.replace('dut = { acl = 25 }', 'dut = { nat44 = true }') + f"""
[[test]]
kind = "connections"
scenarios = ["acl"]
frame_sizes = [128]
mixes = ["100/0"]
{params}
resolution = 0.01
""", "p.toml")


def test_a_kind_s_history_with_other_parameters_stands_in_where_no_model_counts_its_trials():
    """An RFC 9693 test at a new resolution or with other metrics has no history of its own key: it is
    planned from this machine's tests of its kind (said so), not as one guessed trial of 1 s; a search,
    which the plan models from its parameters, keeps its model."""
    c = _with_connections('metrics = ["establishment_rate"]')
    assert estimate.kind_key("connections", c.tests[2].params.__dict__) == "connections resolution=0.01 metrics=establishment_rate"
    old = "connections resolution=0.05 metrics=establishment_rate,tear_down_rate"
    h = estimate.History(trials={old: 30.0, "throughput resolution=0.02": 20.0}, beyond_s={old: 0.8}, traffic_s={old: 0.2})
    p = estimate.plan(c, h, 0)
    conn, thr = p.tests[2], p.tests[0]
    assert (conn.trials, conn.seconds_a_trial, conn.alike, conn.from_history, conn.guessed) == (30.0, pytest.approx(1.0), True, False, False)
    assert (thr.trials, thr.alike) == (estimate.expected_trials(c.tests[0])[0], False)
    assert "trials from this kind's runs with other parameters" in render.plan(c, p, "here")


def test_without_history_rfc_9693_s_rates_are_planned_from_their_bisection_and_the_tear_down_s_measurements():
    """transition-quick's connections test was planned as one 1.5-s trial a point (54 s for a run of 4 min 36
    s, run H): its establishment rate bisects from its top, two engine runs a step, and its tear-down rate
    opens and validates N three times; each run's traffic follows from N and the rates."""
    c = _with_connections('connections = 10000\nmax_rate_fps = 500000\nopen_rate_fps = 20000\n'
                          'validate_rate_fps = 20000\nmetrics = ["establishment_rate", "tear_down_rate"]')
    conn = c.tests[2]
    assert estimate.expected_trials(conn) == (24.0, 48.0)  # 2 × (7 halvings to 1 % + 2) + 2 × 3
    establish_s, tear_down_s = 10_000 * (4 / 500_000 + 1 / 20_000) / 2, 10_000 * (1 / 20_000 + 1 / 20_000) / 2
    assert estimate.rate_phase_s(conn) == pytest.approx((18 * establish_s + 6 * tear_down_s) / 24)  # 0.34 s
    planned = estimate.plan(c, estimate.History(), 0).tests[2]
    assert (planned.trials, planned.guessed) == (24.0, True)
    assert planned.seconds_a_trial == pytest.approx(estimate.rate_phase_s(conn) + estimate.fallback_beyond_s(conn))
    everything = _with_connections("connections = 10000").tests[2]  # every metric, the capacity's search too
    assert estimate.expected_trials(everything)[0] == 16.0 + 18.0 + 6.0


def test_a_table_capacity_search_is_planned_from_its_bisection_not_from_the_establishment_rate_s_history():
    """transition's capacity search (run 15: 16 trials in 302 s, each opening up to 300,000 connections at
    10,000/s and validating them at 20,000/s) was planned from the establishment rate's short trials (65 s for
    both families): its trials are modelled from its top, rates and resolution until it has history of its own."""
    c = _with_connections('metrics = ["capacity"]\nsearch_max_connections = 300000\nopen_rate_fps = 10000\n'
                          'validate_rate_fps = 20000')
    cap = c.tests[2]
    assert estimate.expected_trials(cap) == (16.0, 18.0)  # 2 × (7 halvings to 1 % + the top), open and validate
    assert estimate.trial_s(cap) == pytest.approx(0.75 * 300_000 * (1 / 10_000 + 1 / 20_000) / 2)  # 16.9 s
    short = "connections resolution=0.01 metrics=establishment_rate"
    h = estimate.History(trials={short: 32.6}, beyond_s={short: 0.5}, traffic_s={short: 0.5})
    planned = estimate.plan(c, h, 0).tests[2]
    assert (planned.trials, planned.alike) == (16.0, False)
    assert planned.seconds_a_trial == pytest.approx(estimate.trial_s(cap) + 0.5 + estimate.FALLBACK_TRIAL_S)  # + drain, beyond
    own = "connections resolution=0.01 metrics=capacity"
    h = estimate.History(trials={short: 32.6, own: 16.0}, beyond_s={own: 0.5})
    assert estimate.plan(c, h, 0).tests[2].from_history


def test_a_host_stack_test_which_stores_no_engine_trial_counts_as_one_run_of_its_duration(tmp_path):
    """kannan-throughput's 400 iperf3 runs of 10 s stored no engine trial: its history is one trial a
    point of 10 s and what the point took beyond it, not 0 trials (a plan of 0 s)."""
    here = selftest.machine()
    with Store(tmp_path / "r.db") as store:
        rid = store.start_run("old", "test", here, None, "o.toml", "x", "")
        for i in range(4):
            store.insert_test({"run_id": rid, "point_key": f"0:stack-throughput:100/0:0:uni:{i}", "kind": "stack-throughput",
                               "mix": "100/0", "frame_size": 0, "bidirectional": 0, "repetition": i + 1,
                               "params": {"params": {"duration_s": 10.0, "protocol": "tcp"}}, "status": "done",
                               "started_at_unix_s": 1000.0, "finished_at_unix_s": 1010.4})
        store.finish_run(rid, "finished")
        h = estimate.history(store, here)
    assert h.trials == {"stack-throughput": 1.0}
    assert h.beyond_s["stack-throughput"] == pytest.approx(0.4) and h.traffic_s["stack-throughput"] == 10.0


def test_an_interrupted_run_s_ended_tests_are_history_a_failed_run_s_are_not(tmp_path):
    """gamess-forwarding's first session ended interrupted after 30 searches on a VM router; their
    trial counts plan its rest, where a failed run's might describe what failed."""
    here = selftest.machine()
    with Store(tmp_path / "r.db") as store:
        for status, trials in (("interrupted", 20), ("failed", 60)):
            rid = store.start_run("old", "test", here, None, "o.toml", "x", "")
            tid = store.insert_test({"run_id": rid, "point_key": "0:throughput:100/0:128:uni:1", "kind": "throughput",
                                     "mix": "100/0", "frame_size": 128, "bidirectional": 0, "repetition": 1,
                                     "params": {"params": {"search": "binary", "resolution": 0.01}}, "status": "done",
                                     "started_at_unix_s": 1000.0, "finished_at_unix_s": 1000.0 + trials * 2.5})
            for seq in range(trials):
                store.insert_trial({"test_id": tid, "seq": seq, "call": "measure", "call_args": {}, "duration_s": 2.0,
                                    "tester_limited": 0, "recorded_at_unix_s": 1000.0, "intended_fps": 1.0,
                                    "offered_fps": 1.0, "tx_frames": 1, "rx_frames": 1, "lost_frames": 0,
                                    "loss_ratio": 0.0, "streams": [], "extra": {}})
            store.finish_run(rid, status)
        h = estimate.history(store, here)
    assert h.runs == 1 and h.trials == {"throughput search=binary resolution=0.01": 20.0}


def test_a_loss_test_given_its_loads_runs_each_of_them_whatever_sweeps_took_here():
    """RFC 2544 §26.3's sweep stops after two loss-free loads, so history counts its trials; a test
    given ``loads_pct`` runs every load (seed 000's ten), and a sweep that stopped after two here
    must not plan it at two."""
    text = CAMPAIGN + """
[[test]]
kind = "loss"
loads_pct = [95, 90, 80, 70, 60, 50, 40, 30, 20, 10]
trial_duration_s = 2.0
[[test]]
kind = "loss"
trial_duration_s = 2.0
"""
    c = spec.parse_campaign(text, "p.toml")
    h = estimate.History(trials={"loss": 2.0})
    given, sweep = estimate.plan(c, h, 0).tests[2:]
    assert (given.trials, given.trials_most, given.from_history, given.guessed) == (10.0, 10.0, False, False)
    assert (sweep.trials, sweep.from_history) == (2.0, True)


def test_a_vm_router_s_searches_plan_vm_searches_and_a_namespace_router_s_plan_namespace_ones(tmp_path):
    """Searches on a VM router under TCG took 10-33 trials (gamess-forwarding, AMD EPYC, 2026-11-29),
    on the namespace router far fewer: the router a test measures is part of its history's key."""
    here = selftest.machine()
    with Store(tmp_path / "r.db") as store:
        _stored_run(store, here, 60.0, 20, 2.0, 0.5, lab={"kind": "emulated", "router": "vm"})
        h = estimate.history(store, here)
    assert h.trials == {"throughput search=binary resolution=0.01 router=vm": 20.0}
    on_ns = spec.parse_campaign(CAMPAIGN, "p.toml")
    on_vm = spec.parse_campaign(CAMPAIGN.replace('link_speed = "1G"', 'link_speed = "1G"\nrouter = "vm"'), "p.toml")
    ns_thr, vm_thr = estimate.plan(on_ns, h, 0).tests[0], estimate.plan(on_vm, h, 0).tests[0]
    assert (ns_thr.trials, ns_thr.from_history) == (estimate.expected_trials(on_ns.tests[0])[0], False)
    assert (vm_thr.trials, vm_thr.from_history) == (20.0, True)
    assert estimate.router_of({"scenarios": {"pc": {"lab": {"kind": "emulated", "router": "vm"}}}}, "pc") == "vm"
    assert estimate.router_of({"lab": {"kind": "external"}}, None) == "external"
    assert estimate.router_of({}, None) == "ns"  # runs before the router was recorded


def test_without_history_a_vm_routers_neighbour_started_search_is_planned_as_from_the_line_rate():
    """A VM router's capacity drifts between searches: gamess-forwarding's
    neighbour-started searches to 1 % took 16-32 trials (EPYC-25), the
    bracketed model 6.6; from the line rate, both goals apart: 20.25."""
    text = CAMPAIGN.replace('resolution = 0.01', 'resolution = 0.01\nstart = "neighbour"\nconfirm_losses = 1', 1)
    t = spec.parse_campaign(text, "p.toml").tests[0]
    assert estimate.expected_trials(t, "ns")[0] == pytest.approx(2 * 4 * estimate.STEP_SHARE["throughput"] * 1.5)
    assert estimate.expected_trials(t, "vm")[0] == pytest.approx(2 * 9 * estimate.STEP_SHARE_DEFAULT * 1.5) == 20.25
    vm = spec.parse_campaign(text.replace('link_speed = "1G"', 'link_speed = "1G"\nrouter = "vm"'), "p.toml")
    assert estimate.plan(vm, estimate.History(), 0).tests[0].trials == 20.25


def test_without_history_a_vm_router_s_search_where_it_forwards_the_line_rate_is_planned_as_one_trial():
    """gamess-forwarding's VM router (TCG, EPYC-25) forwarded 18-42 kframes/s and passed its 1062 and 1082 B
    points at their line rates in one trial: at 100 Mb/s 1518 B (8,127 frames/s) is below
    ROUTER_FPS["vm"], 128 B (84,459) above; on a namespace router, whose rate is unknown, both search."""
    text = CAMPAIGN.replace('link_speed = "1G"', 'link_speed = "100M"')
    vm = spec.parse_campaign(text.replace('link_speed = "100M"', 'link_speed = "100M"\nrouter = "vm"'), "p.toml")
    searching = estimate.expected_trials(vm.tests[0], "vm")[0]
    assert estimate.plan(vm, estimate.History(), 0).tests[0].trials == pytest.approx((searching + 1.0) / 2)
    ns = spec.parse_campaign(text, "p.toml")
    assert estimate.plan(ns, estimate.History(), 0).tests[0].trials == estimate.expected_trials(ns.tests[0])[0]
    fast = spec.parse_campaign(CAMPAIGN.replace('link_speed = "1G"', 'link_speed = "1G"\nrouter = "vm"'), "p.toml")
    assert estimate.plan(fast, estimate.History(), 0).tests[0].trials == searching  # 1518 B at 1 Gb/s: 81 k


def test_a_request_response_test_counts_its_run_through_the_router_and_over_the_baseline():
    c = spec.parse_campaign("""
name = "rr"
[lab]
topology = "a"
[[test]]
kind = "rr-latency"
mixes = ["100/0"]
payload_sizes = [8, 64]
duration_s = 5.0
""", "rr.toml")
    rr = estimate.plan(c, estimate.History(), 0).tests[0]
    assert rr.trials == 2 and rr.seconds_a_trial == pytest.approx(5.0 + estimate.fallback_beyond_s(c.tests[0]))


def test_a_search_with_no_history_of_its_own_takes_its_router_s_searches_that_start_alike():
    """cisco-dualstack's VM searches to 2 % had no history; the same router's neighbour-started searches to
    1 % (16 trials) stand in, not the model's 9 nor another router's or a line-started search's count."""
    text = CAMPAIGN.replace('link_speed = "1G"', 'link_speed = "1G"\nrouter = "vm"').replace(
        'resolution = 0.01', 'resolution = 0.02\nstart = "neighbour"', 1)
    c = spec.parse_campaign(text, "p.toml")
    h = estimate.History(trials={"throughput search=binary resolution=0.01 start=neighbour router=vm": 16.0,
                                 "throughput search=binary resolution=0.02 start=neighbour": 5.0,
                                 "throughput search=binary resolution=0.02 router=vm": 40.0})
    thr = estimate.plan(c, h, 0).tests[0]
    assert (thr.trials, thr.alike, thr.from_history) == (16.0, True, False)
    line = spec.parse_campaign(text.replace('start = "neighbour"', 'start = "line"'), "p.toml")
    assert estimate.plan(line, estimate.History(trials={"throughput search=binary resolution=0.01 router=vm": 30.0}),
                         0).tests[0].trials == estimate.expected_trials(line.tests[0], "vm")[0]
