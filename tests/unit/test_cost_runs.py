"""The DUT's cost per frame read inside one trial sent in runs: when each
run was on the wire (lab/cost.runs), which CPU samples count for which
stream (lab/cost.runs_work), the ns per frame of each family and stream
(lab/cost.per_family), the request and spec that ask for runs, and the
report's paired comparisons of them (report/samples.py)."""

import numpy as np
import pytest

from v6bench.core.errors import UsageError
from v6bench.core.frames import RUNS_S, Traffic, run_shares
from v6bench.lab.machine import cost
from v6bench.report import data, verdicts
from v6bench.trial.path import LabPath
from v6bench.trial.request import make_request
from v6bench.trial.spec import engine_spec

from test_trial_spec import check, lab_of

T0 = 1_800_000_000_000_000_000
FPS = 60_000.0


def _eng(shares=(50, 50), run_frames=6000, frames=120_000, slipped_ns=0, names=("ipv4-t1-t2", "ipv6-t1-t2"),
         versions=(4, 6), rx=None) -> dict:
    """An engine result of one sending port in runs (the keys lab/cost reads)."""
    sent = [frames * s // sum(shares) for s in shares]
    streams = [{"name": n, "tx_port": "t1", "share": s, "ip_version": v, "tx_frames": f, "rx_frames": f if rx is None else r}
               for n, s, v, f, r in zip(names, shares, versions, sent, rx or sent)]
    tx = {"run_frames": run_frames, "intended_fps": FPS, "planned_frames": frames, "slipped_ns": slipped_ns,
          "slips": 1 if slipped_ns else 0, "rate_step": None}
    return {"started_at_unix_ns": T0, "ports": [{"name": "t1", "tx": tx}, {"name": "t2", "tx": None}], "streams": streams}


def test_the_runs_follow_the_ports_schedule_less_a_guard():
    """50/50 in runs of 6,000 frames at 60 kframes/s: 100-ms runs
    alternating over the 2-s trial, each counted from RUN_GUARD_NS after
    its start; a sender that slipped counts each later by what it slipped;
    one that slipped more than a quarter of a run gives none. 75/25
    reduces to 3:1: runs of 300 and 100 ms."""
    runs = cost.runs(_eng())
    assert len(runs) == 20 and [r[2] for r in runs[:3]] == ["ipv4-t1-t2", "ipv6-t1-t2", "ipv4-t1-t2"]
    assert runs[0] == (T0 + cost.RUN_GUARD_NS, T0 + 100_000_000, "ipv4-t1-t2")
    assert runs[19] == (T0 + 1_900_000_000 + cost.RUN_GUARD_NS, T0 + 2_000_000_000, "ipv6-t1-t2")
    slipped = cost.runs(_eng(slipped_ns=3_000_000))
    assert slipped[1] == (T0 + 100_000_000 + cost.RUN_GUARD_NS + 3_000_000, T0 + 200_000_000, "ipv6-t1-t2")
    assert cost.runs(_eng(slipped_ns=26_000_000)) == []
    uneven = cost.runs(_eng(shares=(75, 25), run_frames=6000, frames=96_000))
    assert [(b - a + cost.RUN_GUARD_NS, n) for a, b, n in uneven] == [(300_000_000, "ipv4-t1-t2"), (100_000_000, "ipv6-t1-t2")] * 4
    assert run_shares([50, 50, 50, 50]) == [1, 1, 1, 1] and run_shares([75, 25]) == [3, 1]
    not_in_runs = _eng()
    not_in_runs["ports"][0]["tx"]["run_frames"] = None
    assert cost.runs(not_in_runs) == [] and cost.per_family({"x": {}}, not_in_runs) is None


def _steps(eng: dict, share_of: dict[str, float], interval_ns: int = 20_000_000, phase_ns: int = 7_000_000):
    """The sampler's steps over the trial: each the forwarding's run time
    integrated over the runs it spans, ``share_of`` CPUs while a stream's
    run is on (the frames of a run cost its stream's share)."""
    bounds = []
    k, fps = 0, eng["ports"][0]["tx"]["intended_fps"]
    lengths = [u * eng["ports"][0]["tx"]["run_frames"] for u in run_shares([s["share"] for s in eng["streams"]])]
    while k < eng["ports"][0]["tx"]["planned_frames"]:
        for s, n in zip(eng["streams"], lengths):
            bounds.append((T0 + k * 1e9 / fps, T0 + (k + n) * 1e9 / fps, s["name"]))
            k += n
    end = bounds[-1][1]

    def busy(a, b):
        return sum(max(0.0, min(b, hi) - max(a, lo)) * share_of[n] for lo, hi, n in bounds)

    times = [T0 - phase_ns + i * interval_ns for i in range(int((end - T0) // interval_ns) + 2)]
    return [(a, b, round(busy(a, b))) for a, b in zip(times, times[1:])]


def test_each_streams_cost_is_its_runs_share_over_its_rate():
    """Steps inside a run count for its stream, steps across a run's ends
    not: a forwarding that takes 0.45 CPU while IPv4 runs and 0.48 while
    IPv6 does costs 7,500 and 8,000 ns a frame at 60 kframes/s, exactly;
    a family that lost 1 % of its frames costs its share over the frames
    delivered; an unread step is left out."""
    eng = _eng()
    steps = _steps(eng, {"ipv4-t1-t2": 0.45, "ipv6-t1-t2": 0.48})
    work = cost.runs_work(steps, cost.runs(eng))
    assert set(work) == {"ipv4-t1-t2", "ipv6-t1-t2"} and 30 <= work["ipv4-t1-t2"]["steps"] <= 40
    got = cost.per_family(work, eng)
    assert got["4"] == pytest.approx(7500, abs=0.01) and got["6"] == pytest.approx(8000, abs=0.01)
    assert got["streams"] == {"ipv4-t1-t2": got["4"], "ipv6-t1-t2": got["6"]}
    lossy = _eng(rx=[60_000, 59_400])
    assert cost.per_family(work, lossy)["6"] == pytest.approx(8000 / 0.99, abs=0.01)
    holed = cost.runs_work([(a, b, None) if i % 5 == 1 else (a, b, x) for i, (a, b, x) in enumerate(steps)],
                           cost.runs(eng))
    assert sum(w["steps"] for w in holed.values()) < sum(w["steps"] for w in work.values())
    assert cost.per_family(holed, eng)["6"] == pytest.approx(8000, abs=0.01)
    assert cost.per_family({"ipv4-t1-t2": work["ipv4-t1-t2"]}, eng) is None  # a family unread: no comparison


def test_two_flows_a_family_each_get_their_own_cost():
    names = ("ipv4-t1-t2", "ipv6-t1-t2", "ipv4-t1-t2-flow2", "ipv6-t1-t2-flow2")
    eng = _eng(shares=(25, 25, 25, 25), names=names, versions=(4, 6, 4, 6))
    share = dict(zip(names, (0.45, 0.45, 0.45, 0.57)))
    got = cost.per_family(cost.runs_work(_steps(eng, share), cost.runs(eng)), eng)
    assert got["streams"]["ipv6-t1-t2-flow2"] == pytest.approx(9500, abs=0.01)
    assert got["streams"]["ipv4-t1-t2-flow2"] == pytest.approx(7500, abs=0.01)
    assert 7500 < got["6"] < 9500 and got["4"] == pytest.approx(7500, abs=0.01)


class _Sampler:
    """A lab's CPU sampler (lab/cpu_window.Sampler) over given steps: what
    the namespace lab's NAPI threads and the VM lab's QEMU threads give."""

    def __init__(self, steps):
        self.all, self.asked = steps, None

    def steps(self, start_ns, end_ns):
        self.asked = (start_ns, end_ns)
        return [s for s in self.all if start_ns <= s[0] and s[1] <= end_ns]


def test_every_lab_with_a_sampler_gets_the_work_of_each_run_the_same_way():
    """cost.with_runs, which both the namespace and the VM observers call:
    the sampler's steps over the traffic window, split by run; the work as
    given where the trial was not in runs or its forwarding unread."""
    eng = {**_eng(), "traffic_s": 2.0}
    sampler = _Sampler(_steps(eng, {"ipv4-t1-t2": 0.45, "ipv6-t1-t2": 0.48}))
    work = cost.forwarding([0.465], "QEMU threads")
    got = cost.with_runs(work, eng, sampler)
    assert sampler.asked == (T0, T0 + 2_000_000_000) and "runs" not in work
    assert cost.per_family(got["runs"], eng)["6"] == pytest.approx(8000, abs=0.01)
    assert {k: v for k, v in got.items() if k != "runs"} == work
    unread = cost.forwarding([None], "QEMU threads")
    assert cost.with_runs(unread, eng, sampler) is unread
    not_in_runs = {**eng, "ports": [{"name": "t1", "tx": {**eng["ports"][0]["tx"], "run_frames": None}}]}
    assert cost.with_runs(work, not_in_runs, sampler) is work


def test_a_request_in_runs_is_checked_and_becomes_the_engines_run_frames(engine_bin):
    """``runs_s``: a share unit's run lasts that long at the trial's rate
    (0.1 s at 60 kframes/s: 6,000 frames), which the engine's own validator
    accepts; a run outside RUNS_S, a trial shorter than two rounds, or
    traffic not sent from one port one way are refused, naming the field."""
    req = make_request("50/50", 128, "60kfps", 2, False, flows=2, runs_s=0.1)
    lab = lab_of("a")
    spec = engine_spec(lab, req, req.check_against(LabPath.of(lab))).to_json()
    [sender] = [p for p in spec["ports"] if "tx_rate" in p]
    assert sender["tx_run_frames"] == 6000 and all("tx_run_frames" not in p for p in spec["ports"] if p is not sender)
    assert req.traffic == Traffic(flows=2, runs_s=0.1)
    assert Traffic.from_json(req.traffic.to_json()) == req.traffic and "in 0.1-s runs" in req.traffic.describe()
    check(engine_bin, spec)
    for kw in ({"runs_s": RUNS_S[0] / 2}, {"runs_s": RUNS_S[1] * 2}, {"runs_s": 0.3, "flows": 2},
               {"runs_s": 0.1, "bidirectional": True}, {"runs_s": 0.1, "icmp_echo": "far"}):
        bidirectional = kw.pop("bidirectional", False)
        with pytest.raises(UsageError) as e:
            make_request("50/50", 128, "60kfps", 2, bidirectional, **kw)
        assert e.value.field == ("runs_s",), kw


def test_a_campaign_refuses_trials_too_short_for_two_rounds_of_runs():
    from v6bench.campaign import spec

    d = {"name": "runs", "lab": {"topology": "a"}, "matrix": {"mixes": ["100/0", "0/100"], "frame_sizes": [128]},
         "test": [{"kind": "latency", "loads": ["60kfps"], "trial_duration_s": 0.5, "flows": 2, "runs_s": 0.1}]}
    with pytest.raises(UsageError) as e:
        spec.from_dict(d, "", "runs")
    assert e.value.field == ("test", 0, "runs_s") and "fewer than two rounds" in e.value.message
    d["test"][0]["trial_duration_s"] = 0.8
    assert spec.from_dict(d, "", "runs").tests[0].traffic.runs_s == 0.1


def _trial(v4: float, v6: float, flow2: dict[int, float]) -> dict:
    names = {(v, k): f"ipv{v}-t1-t2{'-flow2' if k == 2 else ''}" for v in (4, 6) for k in (1, 2)}
    streams = [{"name": n, "ip_version": v, "latency_ns": {"p50": 20_000, "p99": 40_000}} for (v, _), n in names.items()]
    per = {names[v, k]: (v4 if v == 4 else v6) * (flow2.get(v, 1.0) if k == 2 else 1.0) for v, k in names}
    family = {str(v): (per[names[v, 1]] + per[names[v, 2]]) / 2 for v in (4, 6)}  # both flows' runs, as lab/cost
    return {"call": "measure", "call_args": {"load_fps": 60_000.0}, "tester_limited": False, "streams": streams,
            "result": {"suspect_reasons": [], "dut_cost": {"ns_per_frame": (v4 + v6) / 2, "not_the_duts": None,
                                                           "by_family": {**family, "streams": per}}}}


def test_the_report_compares_the_families_and_the_flows_costs_inside_each_trial():
    """Trials in runs whose level moves by ±10 % from trial to trial and in
    which IPv6 costs 1 % more: the paired comparison finds +1 %, which a
    comparison across trials of such levels could not; IPv4's two flows,
    identical, are an A/A control that finds nothing; a flow 2 that carries a
    header (``flow2``) is found against its flow 1, and IPv4 against IPv6
    is then their flows 1 (native in both), not IPv6's runs with the
    header (+11 %); a DUT scenario on one family's flow 2 gives no family
    pair at all."""
    rng = np.random.default_rng(11)
    levels = 7500 * (1 + rng.uniform(-0.1, 0.1, 10))
    trials = tuple(_trial(x * (1 + rng.normal(0, 2e-3)), 1.01 * x * (1 + rng.normal(0, 2e-3)), {6: 1.2})
                   for x in levels)
    row = {"load": "60kfps", "load_fps": 60_000.0, "tester_limited_trials": 0, "families": {}}
    params = {"params": {}, "flows": 2, "runs_s": 0.1, "ext_headers": "hbh", "ext_headers_scope": "flow2",
              "flow2": {"6": "+hbh"}}
    t = data.TestData(0, "latency", "50/50", 128, False, 0, params, {"loads": [row]}, trials)
    decided = verdicts.of(data.RunData({"environment": {}}, None, (t,), 0))
    costs = {(p.name_a, p.point.split(")")[-1].strip()): (p, c) for p, c in decided.values()
             if p.metric == "cost per frame [ns]"}
    p, c = costs["IPv4", ", flow 1 of each family"]
    assert (c.design, c.n_a, c.outcome) == ("paired", 10, "differs") and c.diff_pct == pytest.approx(1.0, abs=0.2)
    unscoped = data.TestData(0, "latency", "50/50", 128, False, 0, {**params, "flow2": {}}, {"loads": [row]}, trials)
    [both] = [c for p, c in verdicts.of(data.RunData({"environment": {}}, None, (unscoped,), 0)).values()
              if p.metric == "cost per frame [ns]" and p.name_a == "IPv4"]
    assert both.diff_pct == pytest.approx(11.1, abs=0.3)  # every run of each family: what a scoped test must not compare
    # The DUT's list on IPv6's flow 2 alone: IPv6's flow 1 walks what picks flow 2 out, IPv4's not; no family pair.
    one_sided = data.TestData(0, "latency", "50/50", 128, False, 0, {**params, "ext_headers": None,
                              "ext_headers_scope": "all", "flow2": {"6": "ACL of 100 rules at in"}, "flow2_dut": ["6"]},
                              {"loads": [row]}, trials)
    kept = [p for p, _ in verdicts.of(data.RunData({"environment": {}}, None, (one_sided,), 0)).values()]
    assert kept and not [p for p in kept if p.name_a == "IPv4"] and [p for p in kept if p.name_b.startswith("flow 2: ACL")]
    p4, c4 = costs["flow 1", "IPv4"]
    assert p4.control and c4.outcome == "none"
    p6, c6 = costs["flow 1", "IPv6"]
    assert not p6.control and c6.outcome == "differs" and c6.diff_pct == pytest.approx(20.0, abs=0.5)
    unread = tuple({**x, "result": {**x["result"], "dut_cost": {"ns_per_frame": 7500.0}}} for x in trials)
    t = data.TestData(0, "latency", "50/50", 128, False, 0, params, {"loads": [row]}, unread)
    assert not [p for p, _ in verdicts.of(data.RunData({"environment": {}}, None, (t,), 0)).values()
                if p.metric == "cost per frame [ns]"]
