"""Campaign files, their expansion, the results store and resumable runs,
with the simulated tester (no root)."""

import json
import re
import sqlite3

import pytest

from v6bench.campaign import plan as run_order
from v6bench.campaign import recorder, runner, spec
from v6bench.core.errors import UsageError
from v6bench.methods.simulated import SimulatedTester
from v6bench.store import export
from v6bench.store.db import SCHEMA_VERSION, Store

GOOD = """
name = "t"
[lab]
topology = "a"
link_speed = "100M"
[matrix]
mixes = ["100/0", "0/100"]
frame_sizes = [128, 1518]
repeat = 1
[[test]]
kind = "throughput"
trial_duration_s = 1.0
resolution = 0.01
[[test]]
kind = "recovery"
frame_sizes = [128]
overload_s = 1.0
hold_s = 1.0
"""


def test_campaign_expands_the_matrix_in_file_order():
    c = spec.parse_campaign(GOOD, "t.toml")
    keys = [p.key for p in run_order.expand(c)]
    assert keys[:4] == ["0:throughput:100/0:128:uni:1", "0:throughput:100/0:1518:uni:1",
                        "0:throughput:0/100:128:uni:1", "0:throughput:0/100:1518:uni:1"]
    assert keys[4:] == ["1:recovery:100/0:128:uni:1", "1:recovery:0/100:128:uni:1"]
    assert c.lab.link_speed_bps == 100e6


@pytest.mark.parametrize("edit, message", [
    (("frame_sizes = [128, 1518]", "frame_sizes = [128, 50]"), "t.toml: matrix.frame_sizes[1]: 50 bytes is outside 64..9216"),
    (('kind = "recovery"', 'kind = "jitter"'), "t.toml: test[1].kind: 'jitter' is not a test"),
    (("resolution = 0.01", "resolution = 2"), "t.toml: test[0].resolution: 2 is not a ratio"),
    (("resolution = 0.01", "resolutoin = 0.01"), "t.toml: test[0].resolutoin: unknown key"),
    (('mixes = ["100/0", "0/100"]', 'mixes = ["100/0", "60/60"]'), "t.toml: matrix.mixes[1]: '60/60': the shares sum to 120"),
    (('link_speed = "100M"', 'link_speed = "fast"'), "t.toml: lab.link_speed:"),
    (("[lab]", "[lab]\nmtu = 100"), "t.toml: lab.mtu: all=100 leaves no link for IPv6"),
    (("[lab]", "[lab]\nmtu = \"r1-r2=500\""), "t.toml: lab.mtu: this topology has no link r1-r2"),
    (("[lab]", "[lab]\nmtu = \"t1-r1=60\""), "t.toml: lab.mtu: t1-r1=60 is outside 68..9198 bytes"),
    (("[lab]", "[labs]"), "t.toml: labs: unknown key"),
    (('frame_sizes = [128]', 'frame_sizes = [64]'), "t.toml: test[1].frame_sizes[0]: 64 bytes is outside 84..9216 for IPv6"),
    (("hold_s = 1.0", "hold_s = 1.0\n[[tset]]"), "t.toml: tset: unknown key"),
    (("name = \"t\"", "name = "), "t.toml: not valid TOML"),
    (("hold_s = 1.0", 'hold_s = 1.0\next_headers = "hbh2"'), "t.toml: test[1].ext_headers: 'hbh2' is not one of hbh"),
    (("hold_s = 1.0", 'hold_s = 1.0\next_headers = "dst20"'), "t.toml: test[1].ext_headers: the mix 100/0 has no IPv6"),
    (("hold_s = 1.0", 'hold_s = 1.0\nmixes = ["0/100"]\next_headers = "dst20"'),
     "t.toml: test[1].ext_headers: dst20 needs frames of at least 244 bytes, not 128"),
])
def test_bad_campaign_names_field_and_problem(edit, message):
    with pytest.raises(UsageError) as e:
        spec.parse_campaign(GOOD.replace(*edit), "t.toml")
    assert str(e.value).startswith(message), str(e.value)


def _run(tmp_path, c, stop_after=None, seed=1):
    store = Store(tmp_path / "r.db")
    made = []

    class Stop(KeyboardInterrupt):
        pass

    def make(p):
        t = SimulatedTester(50_000, line_fps=p.frame_size and 84_459.0, buffer_frames=0, recovery_s=0.2, seed=seed)
        made.append(t)
        if stop_after is not None and sum(len(m.calls) for m in made) >= stop_after:
            orig = t.measure

            def measure(d, l, calls=[0]):
                calls[0] += 1
                if calls[0] > 2:
                    raise Stop()
                return orig(d, l)
            t.measure = measure
        return t

    return store, made, make


def test_a_ctrl_c_outside_a_test_s_own_handler_leaves_no_test_running_once_the_run_is_interrupted(tmp_path):
    """A Ctrl-C during a test's last write (outside the handler that marks it interrupted) left its row
    ``running`` after the run ended (a fresh clone's make test, 2026-11-30): the run's end marks it."""
    c = spec.parse_campaign(GOOD, "t.toml")
    store, _, make = _run(tmp_path, c)
    rid = store.start_run(c.name, "test", {"kernel": "x"}, None, c.path, c.sha256, c.text)
    real = store.finish_test

    def ctrl_c_on_done(test_id, status, *a, **k):
        if status == "done":
            raise KeyboardInterrupt
        return real(test_id, status, *a, **k)

    store.finish_test = ctrl_c_on_done
    with pytest.raises(KeyboardInterrupt):
        runner.run_points(c, store, rid, make, lambda s: None)
    assert [t["status"] for t in store.tests(rid)] == ["running"]
    store.finish_run(rid, "interrupted")
    assert [t["status"] for t in store.tests(rid)] == ["interrupted"]
    assert store.run(rid)["status"] == "interrupted"


def test_a_point_the_dut_refuses_is_stored_failed_with_its_reason_and_the_run_goes_on(tmp_path):
    """A long campaign stopped at one point whose DUT refused it (DS-Lite's preliminary phase losing frames,
    campaigns/log/reproducing-2026-12.md, run C) and lost the rest: the point is stored failed with the
    reason, said as it happens and in the run's table, and every other point runs."""
    from v6bench.core.errors import Refused
    from v6bench.report import results as results_text

    c = spec.parse_campaign(GOOD, "t.toml")
    store, _, make = _run(tmp_path, c)
    why = "RFC 9693's preliminary phase: the DUT passed 2,779 of 10,100 frames"

    def refusing(p):
        t = make(p)
        if p.key == "0:throughput:0/100:128:uni:1":
            def measure(d, load):
                raise Refused(why, "preliminary_rate_fps")
            t.measure = measure
        return t
    rid = store.start_run(c.name, "test", {"kernel": "x"}, None, c.path, c.sha256, c.text)
    lines = []
    runner.run_points(c, store, rid, refusing, lines.append)
    status = {t["point_key"]: (t["status"], t.get("error")) for t in store.tests(rid)}
    assert len(status) == 6 and [k for k, (s, _) in status.items() if s != "done"] == ["0:throughput:0/100:128:uni:1"]
    assert status["0:throughput:0/100:128:uni:1"] == ("failed", f"Refused: preliminary_rate_fps: {why}")
    assert any(line.startswith(f"    refused: preliminary_rate_fps: {why}") for line in lines), lines
    table = results_text.tests_table(store.tests(rid))
    assert "failed" in table and why in table


def test_a_run_with_a_refused_point_prints_its_table_and_exits_1(tmp_path, monkeypatch, capsys):
    """The run went on past a refused point (above); the command says so in its exit status and one line."""
    import argparse
    import contextlib

    from v6bench.cli import test as cli_test

    c = spec.parse_campaign(GOOD, "t.toml")
    db = tmp_path / "r.db"

    def run(site, c, store, resume, command, budget_s=None):
        rid = store.start_run(c.name, command, {"kernel": "x"}, None, c.path, c.sha256, c.text)
        for key, status in (("0:throughput:100/0:128:uni:1", "done"), ("1:recovery:0/100:128:uni:1", "failed")):
            tid = store.start_test(rid, key, key.split(":")[1], key.split(":")[2], 128, False, 1, {})
            store.finish_test(tid, status, None, "Refused: the DUT passed 1 of 2 frames" if status == "failed" else None)
        store.finish_run(rid, "finished")
        return rid
    monkeypatch.setattr(cli_test.runner, "run", run)
    monkeypatch.setattr(cli_test.runner, "exclusive", lambda site, c: contextlib.nullcontext())
    assert cli_test._run(None, c, argparse.Namespace(db=str(db), json=False), resume=False) == 1
    out, err = capsys.readouterr()
    assert "the DUT passed 1 of 2 frames" in out and "1 test(s) of run 1 failed" in err


def test_run_records_every_trial_and_resume_skips_done_tests(tmp_path):
    c = spec.parse_campaign(GOOD, "t.toml")
    store, made, make = _run(tmp_path, c, stop_after=10)
    rid = store.start_run(c.name, "test", {"kernel": "x"}, None, c.path, c.sha256, c.text)
    with pytest.raises(KeyboardInterrupt):
        runner.run_points(c, store, rid, make, lambda s: None)
    store.finish_run(rid, "interrupted")
    done_before = store.done_points(rid)
    assert 0 < len(done_before) < 6
    interrupted = [t for t in store.tests(rid) if t["status"] == "interrupted"]
    assert len(interrupted) == 1 and len(store.trials(interrupted[0]["id"])) == 2
    # Resume: finished points are not run again; the interrupted one replays its 2 trials.
    assert store.resumable_run(c.sha256) == rid
    store.resume_run(rid, {"kernel": "y"}, None)
    store2, made2, make2 = _run(tmp_path, c)
    lines = []
    runner.run_points(c, store, rid, make2, lines.append)
    store.finish_run(rid, "finished")
    assert len(store.done_points(rid)) == 6
    assert len(made2) == 6 - len(done_before)
    assert any("2 trials replayed" in line for line in lines)
    assert any(re.search(r"· ETA \d+ (s|min), ends about \d\d:\d\d$", line) for line in lines)
    assert lines[0].startswith("resuming run")
    tests = [t for t in store.tests(rid) if t["status"] == "done"]
    tp = [t for t in tests if t["kind"] == "throughput"]
    assert all(49_000 <= t["result"]["ndr_fps"] <= 50_000 for t in tp)
    rec = [t for t in tests if t["kind"] == "recovery"]
    assert rec[0]["result"]["throughput_from"] == "measured earlier in this run"
    assert rec[0]["result"]["recovery"]["4"]["mean_s"] == pytest.approx(0.2)
    assert store.resumable_run(c.sha256) is None
    assert store.finished_run(c.sha256) == rid
    assert store.run(rid)["environment"]["resumed"][0]["kernel"] == "y"
    # One row per test, each trial once: the interrupted attempt was continued in its own row.
    assert len(store.tests(rid)) == 6 and all(t["status"] == "done" for t in store.tests(rid))
    for t in store.tests(rid):
        assert [x["seq"] for x in store.trials(t["id"])] == list(range(len(store.trials(t["id"]))))
    assert store.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_a_resumed_attempt_that_takes_another_way_drops_the_trials_it_no_longer_makes(tmp_path):
    c = spec.parse_campaign(GOOD, "t.toml")
    store = Store(tmp_path / "r.db")
    rid = store.start_run(c.name, "test", {}, None, c.path, c.sha256, c.text)
    tid = store.start_test(rid, "k", "throughput", "100/0", 64, False, 0, {})
    first = SimulatedTester(50_000, line_fps=84_459.0, seed=1)
    rec = recorder.Recorder(first, store, tid, [])
    for load_fps in (10_000, 20_000, 30_000):
        rec.measure(1.0, load_fps)
    again = recorder.Recorder(SimulatedTester(50_000, line_fps=84_459.0, seed=1), store, tid, store.trials(tid))
    again.measure(1.0, 10_000)       # replayed, stays seq 0
    again.measure(1.0, 25_000)       # another call: seq 1 and 2 of the first attempt go
    trials = store.trials(tid)
    assert [(x["seq"], x["call_args"]["load_fps"]) for x in trials] == [(0, 10_000), (1, 25_000)]
    assert again.replayed == 1


def test_exports_and_schema_version(tmp_path):
    c = spec.parse_campaign(GOOD, "t.toml")
    store, made, make = _run(tmp_path, c)
    rid = store.start_run(c.name, "test", {}, None)
    runner.run_points(c, store, rid, make, lambda s: None)
    data = export.as_json(store, rid)
    assert data["schema_version"] == SCHEMA_VERSION and len(data["tests"]) == 6
    assert all(t["trials"] for t in data["tests"])
    rows = export.rows(store, rid)
    assert {r["ip_version"] for r in rows} == {4, 6}
    out = tmp_path / "r.parquet"
    with open(out, "wb") as f:
        export.export(store, rid, "parquet", f)
    import pyarrow.parquet as pq
    assert pq.read_table(out).num_rows == len(rows)
    with open(tmp_path / "r.csv", "wb") as f:
        export.export(store, rid, "csv", f)
    assert (tmp_path / "r.csv").read_text().splitlines()[0].startswith("run_id,test_id,kind")
    store.close()
    db = sqlite3.connect(tmp_path / "r.db")
    db.execute("UPDATE meta SET value='99' WHERE key='schema_version'")
    db.commit()
    with pytest.raises(UsageError, match="schema version 99"):
        Store(tmp_path / "r.db")


def test_a_trial_is_committed_the_moment_it_ends(tmp_path):
    store = Store(tmp_path / "r.db")
    rid = store.start_run("x", "test", {}, None)
    tid = store.start_test(rid, "k", "throughput", "100/0", 128, False, 1, {})
    store.add_trial(tid, 0, "measure", {"load_fps": 1}, SimulatedTester(10).measure(1.0, 5.0))
    # Another connection sees it at once: nothing waits for a later commit.
    other = sqlite3.connect(tmp_path / "r.db")
    assert other.execute("SELECT COUNT(*) FROM trials").fetchone()[0] == 1
    assert json.loads(other.execute("SELECT streams_json FROM trials").fetchone()[0])[0]["ip_version"] == 4


def test_a_test_with_extension_headers_searches_its_own_throughput(tmp_path):
    """The NDR of plain frames is not reused for frames with extension headers."""
    text = GOOD.replace('mixes = ["100/0", "0/100"]', 'mixes = ["0/100"]').replace("frame_sizes = [128, 1518]", "frame_sizes = [1280]")
    text = text.replace("frame_sizes = [128]\n", 'ext_headers = "chain"\n')
    c = spec.parse_campaign(text, "t.toml")
    assert [t.traffic.ext_headers for t in c.tests] == [None, "chain"]
    store, made, make = _run(tmp_path, c)
    run_id = store.start_run(c.name, "test", {"kernel": "x"}, None, c.path, c.sha256, c.text)
    runner.run_points(c, store, run_id, make, lambda s: None)
    (rec,) = [t for t in store.tests(run_id) if t["kind"] == "recovery"]
    assert rec["params"]["ext_headers"] == "chain"
    assert rec["result"]["throughput_from"] == "searched for this test"
    assert store.test_result(run_id, "throughput", "0/100", 1280, False)["ndr_fps"] > 0
    assert store.test_result(run_id, "throughput", "0/100", 1280, False, {"ext_headers": "chain"}) is None


def test_icmp_echo_is_a_test_key_checked_against_directions_and_topology():
    text = GOOD.replace("frame_sizes = [128]\n", 'icmp_echo = "far"\n')
    c = spec.parse_campaign(text, "t.toml")
    assert [t.traffic.icmp_echo for t in c.tests] == [None, "far"]
    assert c.tests[1].traffic.describe() == " +echo-far"
    with pytest.raises(UsageError, match="icmp_echo: 'near' is not one of dut, far"):
        spec.parse_campaign(GOOD.replace("frame_sizes = [128]\n", 'icmp_echo = "near"\n'), "t.toml")
    with pytest.raises(UsageError, match="echo traffic is already two-way"):
        spec.parse_campaign(GOOD.replace("frame_sizes = [128]\n", 'icmp_echo = "dut"\ndirections = ["bi"]\n'), "t.toml")


def test_the_default_matrix_is_valid_for_its_default_mixes():
    c = spec.parse_campaign('name = "t"\n[[test]]\nkind = "throughput"\n', "t.toml")
    assert c.tests[0].matrix.frame_sizes == (84, 128, 256, 512, 1024, 1280, 1518)
    assert [str(m) for m in c.tests[0].matrix.mixes] == ["100/0", "0/100"]


SCENARIOS = GOOD + """
[[scenario]]
name = "plain"
[[scenario]]
name = "nat"
dut = { nat44 = true }
[[scenario]]
name = "small-mtu"
lab = { topology = "b", mtu = "r1-r2=1000" }
"""


def test_scenarios_merge_over_lab_and_dut_and_expand_with_their_names():
    text = SCENARIOS.replace('kind = "recovery"', 'kind = "recovery"\nscenarios = ["nat"]').replace(
        'mixes = ["100/0", "0/100"]', 'mixes = ["100/0"]')
    c = spec.parse_campaign(text, "s.toml")
    assert [s.name for s in c.scenarios] == ["plain", "nat", "small-mtu"]
    nat, small = c.scenarios[1], c.scenarios[2]
    assert nat.dut.nat44 and nat.lab.link_speed_bps == 100e6 and nat.lab.topology == "a"
    assert small.lab.topology == "b" and not small.dut.nat44 and small.lab.mtu.of("r1", "r2") == 1000
    assert [s.tests for s in c.scenarios] == [(0,), (0, 1), (0,)]
    keys = [p.key for p in run_order.expand(c)]
    assert keys[0] == "plain/0:throughput:100/0:128:uni:1" and "nat/1:recovery:100/0:128:uni:1" in keys
    assert sum(k.startswith("small-mtu/") for k in keys) == 2
    assert c.lab == c.scenarios[0].lab  # the first scenario's lab is the campaign's
    named = spec.parse_campaign(text.replace('name = "small-mtu"', 'name = "small-mtu"\ncompare_with = "nat"'), "s.toml")
    assert [s.compare_with for s in named.scenarios] == ["", "", "nat"]


@pytest.mark.parametrize("edit, message", [
    (lambda t: t.replace('name = "nat"', 'name = "plain"'), r"scenario\[1\]\.name: 'plain' is used twice"),
    (lambda t: t.replace('name = "nat"', 'name = "NAT!"'), r"scenario\[1\]\.name: expected a name of a-z"),
    (lambda t: t.replace('kind = "recovery"', 'kind = "recovery"\nscenarios = ["nope"]'),
     r"test\[1\]\.scenarios\[0\]: 'nope' is not a scenario \(known: plain, nat, small-mtu\)"),
    (lambda t: t.replace('dut = { nat44 = true }', 'dut = { tunnel = "6in4" }'),
     r"scenario\[1\]\.dut\.tunnel: 6in4 runs between R1 and R2: it needs topology b"),
    (lambda t: t.replace('mtu = "r1-r2=1000"', 'mtu = "r1-r2=1000", speed = 1'), r"scenario\[2\]\.lab\.speed: unknown key"),
    # IPv6 cannot cross the 1000-B link: the test is checked against the scenario's lab.
    (lambda t: t, r"test\[0\]\.mixes\[1\]: in scenario small-mtu: 0/100: .*1280"),
    (lambda t: t.replace('name = "nat"', 'name = "nat"\ncompare_with = "small-mtu"'),
     r"scenario\[1\]\.compare_with: 'small-mtu' is not a scenario above this one \(known: plain\)"),
    (lambda t: t.replace('name = "nat"\ndut = { nat44 = true }', 'name = "nat"\ncontrol_of = "plain"\ncompare_with = "plain"'),
     r"scenario\[1\]\.compare_with: an A/A control is compared with the scenario it controls"),
])
def test_bad_scenarios_name_the_field(edit, message):
    with pytest.raises(UsageError, match=message):
        spec.parse_campaign(edit(SCENARIOS), "s.toml")


def test_scenarios_on_a_campaign_without_them_is_an_error():
    with pytest.raises(UsageError, match=r"test\[1\]\.scenarios: the campaign has no \[\[scenario\]\] tables"):
        spec.parse_campaign(GOOD.replace('kind = "recovery"', 'kind = "recovery"\nscenarios = ["x"]'), "t.toml")


def test_a_run_over_scenarios_reuses_each_scenario_own_throughput(tmp_path):
    c = spec.parse_campaign(SCENARIOS.replace('mixes = ["100/0", "0/100"]', 'mixes = ["100/0"]'), "s.toml")
    store, made, make = _run(tmp_path, c)
    run_id = store.start_run(c.name, "test", {"kernel": "x"}, None, c.path, c.sha256, c.text)
    for s in c.scenarios:
        runner.run_points(c, store, run_id, make, lambda line: None, s.name)
    tests = store.tests(run_id)
    assert [t["params"].get("scenario") for t in tests if t["kind"] == "throughput"] == ["plain", "plain", "nat", "nat",
                                                                                           "small-mtu", "small-mtu"]
    rec = [t for t in tests if t["kind"] == "recovery"]
    assert len(rec) == 3 and all(t["result"]["throughput_from"] == "measured earlier in this run" for t in rec)
    assert store.test_result(run_id, "throughput", "100/0", 128, False, {"ext_headers": None, "scenario": "nat"})
    assert store.test_result(run_id, "throughput", "100/0", 128, False, {"ext_headers": None, "scenario": "other"}) is None


# Designed runs: randomized repetition blocks, recorded and replayed.

DESIGNED = SCENARIOS.replace("repeat = 1", "repeat = 3").replace("r1-r2=1000", "r1-r2=1400")


def test_a_randomized_schedule_runs_every_point_once_per_block_in_a_seeded_order():
    c = spec.parse_campaign(DESIGNED, "s.toml")
    plan = run_order.schedule(c, seed=7)
    assert sorted(p.key for p in plan) == sorted(p.key for p in run_order.expand(c))
    blocks = [p.repetition for p in plan]
    assert blocks == sorted(blocks)  # block 1, then 2, then 3
    per_block = len(plan) // 3
    for b in range(3):
        block = plan[b * per_block:(b + 1) * per_block]
        assert {(p.test.index, str(p.mix), p.frame_size, p.scenario) for p in block} == \
            {(p.test.index, str(p.mix), p.frame_size, p.scenario) for p in run_order.expand(c) if p.repetition == 1}
        # One visit per scenario and block; in each, the searches before the tests that start from them.
        visits = run_order.visits(block, set())
        assert sorted(name for name, _ in visits) == ["nat", "plain", "small-mtu"]
        for _, pts in visits:
            kinds = [p.test.kind for p in pts]
            assert kinds == sorted(kinds, key=lambda k: k != "throughput")
    assert [p.key for p in run_order.schedule(c, seed=7)] == [p.key for p in plan]
    orders = {tuple(p.key for p in run_order.schedule(c, seed=s)) for s in range(6)}
    assert len(orders) > 1
    # The families interleave: in some block IPv6 runs before IPv4 at the same point.
    firsts = {str(next(p.mix for p in plan[b * per_block:(b + 1) * per_block] if p.test.kind == "throughput"))
              for b in range(3) for plan in [run_order.schedule(c, seed=s) for s in range(6)]}
    assert firsts == {"100/0", "0/100"}


def test_file_order_is_kept_on_request_and_bad_designs_name_the_field():
    c = spec.parse_campaign(DESIGNED + '\n[design]\norder = "file"\n', "s.toml")
    assert [p.key for p in run_order.schedule(c, 1)] == [p.key for p in run_order.expand(c)]
    assert spec.parse_campaign(DESIGNED + "\n[design]\nseed = 42\n", "s.toml").design.seed == 42
    with pytest.raises(UsageError, match=r"design\.order: 'shuffled' is not one of randomized, file"):
        spec.parse_campaign(DESIGNED + '\n[design]\norder = "shuffled"\n', "s.toml")
    with pytest.raises(UsageError, match=r"design\.seed: expected a whole number"):
        spec.parse_campaign(DESIGNED + '\n[design]\nseed = "x"\n', "s.toml")
    with pytest.raises(UsageError, match=r"design\.blocks: unknown key"):
        spec.parse_campaign(DESIGNED + "\n[design]\nblocks = 2\n", "s.toml")


def test_a_resumed_run_follows_the_order_it_recorded(tmp_path):
    c = spec.parse_campaign(GOOD.replace("repeat = 1", "repeat = 2"), "t.toml")
    plan = run_order.schedule(c, seed=3)
    store, made, make = _run(tmp_path, c, stop_after=5)
    rid = store.start_run(c.name, "test", {"design": run_order.design_record(c, 3, plan)}, None, c.path, c.sha256, c.text)
    assert [p.key for p in run_order.planned(c, store, rid)] == [p.key for p in plan]
    with pytest.raises(KeyboardInterrupt):
        runner.run_points(c, store, rid, make, lambda s: None)
    store2, made2, make2 = _run(tmp_path, c)
    runner.run_points(c, store, rid, make2, lambda s: None)
    ran = [t["point_key"] for t in store.tests(rid) if t["status"] == "done"]
    assert ran == [p.key for p in plan]  # in the recorded order, each once
    assert store.run(rid)["environment"]["design"]["seed"] == 3


def test_tests_that_give_no_count_repeat_enough_for_a_verdict():
    """Issue 15: the default repetitions of anything the report compares
    give a verdict (MIN_REPETITIONS a side); a count that is given is run
    as given, and kinds the report does not compare run once."""
    from v6bench.core.repetitions import MIN_REPETITIONS

    def blocks(body: str) -> list[int]:
        return [t.matrix.blocks for t in spec.parse_campaign('name = "t"\n' + body, "t.toml").tests]

    assert MIN_REPETITIONS == 5
    assert blocks('[[test]]\nkind = "throughput"\n') == [5]
    assert blocks('[[test]]\nkind = "reset"\n') == [5]  # one reset a block by default
    assert blocks('[[test]]\nkind = "stack-throughput"\n') == [5]
    # Latency's own 20 trials are spread over the blocks, 4 a block, so the families interleave.
    assert blocks('[[test]]\nkind = "latency"\n') == [5]
    lat = spec.parse_campaign('name = "t"\n[[test]]\nkind = "latency"\n', "t.toml").tests[0]
    assert lat.params.repeat == 4 and lat.params.repeat * lat.matrix.blocks == 20
    assert blocks('[[test]]\nkind = "loss"\n[[test]]\nkind = "back-to-back"\n') == [1, 1]  # not compared
    # Given counts are kept: in [matrix], as blocks, or as the test's repeat (the kind's own for latency and reset).
    assert blocks('[matrix]\nrepeat = 2\n[[test]]\nkind = "throughput"\n') == [2]
    assert blocks('[[test]]\nkind = "throughput"\nblocks = 3\n') == [3]
    assert blocks('[[test]]\nkind = "throughput"\nrepeat = 1\n') == [1]
    assert blocks('[[test]]\nkind = "reset"\nrepeat = 2\n') == [1]
    assert blocks('[[test]]\nkind = "latency"\nrepeat = 1\n') == [1]
    given = spec.parse_campaign('name = "t"\n[[test]]\nkind = "latency"\nrepeat = 20\n', "t.toml").tests[0]
    assert (given.matrix.blocks, given.params.repeat) == (1, 20)
    given = spec.parse_campaign('name = "t"\n[[test]]\nkind = "latency"\nblocks = 2\n', "t.toml").tests[0]
    assert (given.matrix.blocks, given.params.repeat) == (2, 20)


def test_a_mix_regression_runs_the_blocks_it_needs_and_a_short_count_is_named_before_the_run():
    """The cost regression's repetition is the block (report/regression.py): latency over two mixes at a load given
    as a rate runs MIN_PAIRS blocks by default. A count given is run as given, and :func:`spec.shortfalls` names
    each test whose comparisons it leaves at "not enough repetitions" (seed 002's 50/50 points ran 5 pairs)."""
    from v6bench.core.repetitions import MIN_PAIRS

    def parsed(body: str) -> spec.Campaign:
        return spec.parse_campaign('name = "t"\n' + body, "t.toml")

    sep = '[[test]]\nkind = "latency"\nfamilies = "separate"\nloads = ["60kfps"]\n'
    t = parsed(sep).tests[0]
    assert MIN_PAIRS == 6 and (t.matrix.blocks, t.params.repeat) == (6, 4)  # 20 trials over 6 blocks: 4 a block
    assert spec.shortfalls(parsed(sep)) == ()
    assert parsed('[[test]]\nkind = "latency"\nfamilies = "separate"\n').tests[0].matrix.blocks == 5  # at throughput
    assert parsed('[[test]]\nkind = "latency"\nloads = ["60kfps"]\n').tests[0].matrix.blocks == 5  # paired: one mix

    short = spec.shortfalls(parsed(sep + "repeat = 1\nblocks = 5\n"))
    assert len(short) == 1 and short[0].startswith("test[0] (latency) runs 5 blocks: the mix regression")
    assert "blocks = 6 would do" in short[0]
    paired = '[[test]]\nkind = "latency"\nmixes = ["50/50"]\nloads = ["60kfps"]\nrepeat = 1\n'
    assert "a paired comparison needs 6 trials (1 a block)" in spec.shortfalls(parsed(paired + "blocks = 5\n"))[0]
    assert spec.shortfalls(parsed(paired + "blocks = 6\n")) == ()
    assert spec.shortfalls(parsed(paired.replace("repeat = 1", "repeat = 2") + "blocks = 3\n")) == ()  # 6 trials
    flows = '[[test]]\nkind = "latency"\nmixes = ["0/100"]\nflows = 2\nloads = ["60kfps"]\nrepeat = 1\nblocks = 5\n'
    assert "a paired comparison" in spec.shortfalls(parsed(flows))[0]
    assert "5 repetitions a side" in spec.shortfalls(parsed('[[test]]\nkind = "throughput"\nblocks = 1\n'))[0]
    # One family in one scenario compares nothing on its own: no note; in two scenarios it compares them.
    assert spec.shortfalls(parsed('[[test]]\nkind = "throughput"\nmixes = ["0/100"]\nblocks = 1\n')) == ()
    two = ('[[scenario]]\nname = "a"\n[[scenario]]\nname = "b"\n'
           '[[test]]\nkind = "throughput"\nmixes = ["0/100"]\nblocks = 1\n')
    assert len(spec.shortfalls(parsed(two))) == 1
    assert spec.shortfalls(parsed('[[test]]\nkind = "loss"\nblocks = 1\n')) == ()  # not compared
    # A throughput search of a 50/50 mix is the mix's (the demo's MLR test): nothing to compare; a reset's is per family.
    assert spec.shortfalls(parsed('[[test]]\nkind = "throughput"\nmixes = ["50/50"]\nblocks = 1\n')) == ()
    assert len(spec.shortfalls(parsed('[[test]]\nkind = "reset"\nmixes = ["50/50"]\nblocks = 1\n'))) == 1


def test_v6bench_test_repeats_a_search_enough_for_a_verdict_unless_told(monkeypatch, tmp_path):
    from v6bench import cli
    from v6bench.cli import test as test_cmd
    from v6bench.lab.model.site import Site

    monkeypatch.setenv("V6BENCH_RUN_DIR", str(tmp_path))  # no lab up: the lab options' defaults
    parser = cli.parser()
    site = Site.from_env()
    c = test_cmd.campaign(site, parser.parse_args(["test", "throughput", "--mix", "100/0,0/100", "--frame-size", "128"]))
    assert c.tests[0].matrix.blocks == 5
    c = test_cmd.campaign(site, parser.parse_args(["test", "throughput", "--frame-size", "128", "--repeat", "1"]))
    assert c.tests[0].matrix.blocks == 1


def test_resume_continues_the_unfinished_run_starts_one_if_none_was_recorded_and_refuses_a_finished_one(tmp_path):
    from v6bench.campaign import runner
    c = spec.parse_campaign(GOOD, "t.toml")
    store = Store(tmp_path / "r.db")
    said = []
    assert runner._resumable(c, store, said.append) is None  # killed before its first lab: nothing recorded
    assert said and "starting one" in said[0]
    rid = store.start_run(c.name, "test", {}, None, c.path, c.sha256, c.text)
    assert runner._resumable(c, store, said.append) == rid
    store.finish_run(rid, "finished")
    with pytest.raises(UsageError, match=f"run {rid} of t .* finished; run it without --resume"):
        runner._resumable(c, store, said.append)


def test_the_pause_after_learning_is_the_engines_unless_a_campaign_sets_it():
    """``settle_s`` (the engine's pause between learning and traffic) is None,
    the engine's default, unless ``[matrix]`` or a test sets it; out of range
    it is refused naming the field."""
    c = spec.parse_campaign(GOOD)
    assert all(t.matrix.settle_s is None for t in c.tests)
    c = spec.parse_campaign(GOOD.replace("repeat = 1\n", "repeat = 1\nsettle_s = 0.1\n", 1))
    assert all(t.matrix.settle_s == 0.1 for t in c.tests)
    c = spec.parse_campaign(GOOD.replace("overload_s", "settle_s = 0\noverload_s"))
    assert [t.matrix.settle_s for t in c.tests] == [None, 0.0]
    for bad in ("-1", "11", "true", '"0.5"'):
        with pytest.raises(UsageError, match=r"matrix\.settle_s"):
            spec.parse_campaign(GOOD.replace("repeat = 1\n", f"repeat = 1\nsettle_s = {bad}\n", 1))


def test_a_tests_ports_are_rfc4814_unless_told_and_checked_against_a_dut_that_keeps_state():
    """``ports`` (core/frames.PORTS): ``auto`` by default and stored with the
    test; through NAT44 or stateful NAT64 RFC 4814's ports are sent too
    (RFC 9693's preliminary phase opens their connections), and the
    phase's keys are checked at load, naming the test's key."""
    c = spec.parse_campaign(GOOD, "t.toml")
    assert {t.traffic.ports for t in c.tests} == {"auto"}
    assert c.tests[0].traffic.to_json()["ports"] == "auto"
    assert "preliminary_connections" not in c.tests[0].traffic.to_json()  # defaults are not stored
    nat = GOOD.replace('link_speed = "100M"\n', 'link_speed = "100M"\n[dut]\nnat44 = true\n')
    for ports in ("rfc4814", "fixed"):
        assert spec.parse_campaign(nat.replace("resolution = 0.01\n", f'resolution = 0.01\nports = "{ports}"\n'),
                                   "t.toml").tests[0].traffic.ports == ports
    given = spec.parse_campaign(nat.replace("resolution = 0.01\n", "resolution = 0.01\npreliminary_connections = 500\n"
                                            "preliminary_rate_fps = 2000\n"), "t.toml").tests[0].traffic
    assert (given.preliminary_connections, given.preliminary_rate_fps) == (500, 2000)
    assert given.to_json()["preliminary_connections"] == 500
    for key, bad, why in (("preliminary_connections", "0", "outside 1..4,000,000"),
                          ("preliminary_connections", "2.5", "whole number"),
                          ("preliminary_rate_fps", "true", "outside"),
                          ("preliminary_connections", "900000000", "outside 1..")):
        with pytest.raises(UsageError) as e:
            spec.parse_campaign(nat.replace("resolution = 0.01\n", f"resolution = 0.01\n{key} = {bad}\n"), "t.toml")
        assert str(e.value).startswith(f"t.toml: test[0].{key}: ") and why in str(e.value), str(e.value)
    with pytest.raises(UsageError) as e:
        spec.parse_campaign(GOOD.replace("resolution = 0.01\n", 'resolution = 0.01\nports = "random"\n'), "t.toml")
    assert "test[0].ports: 'random' is not one of auto, rfc4814, fixed" in str(e.value)


NEIGHBOURS = """
name = "n"
[lab]
topology = "a"
link_speed = "1G"
[matrix]
mixes = ["100/0", "0/100"]
frame_sizes = [128, 1024, 256]
repeat = 2
[[test]]
kind = "throughput"
trial_duration_s = 1.0
resolution = 0.01
start = "neighbour"
[design]
order = "file"
"""


def test_a_search_started_from_its_neighbour_takes_the_same_mix_at_the_nearest_other_frame_size(tmp_path):
    """In file order (a point's repetitions one after the other): each
    mix's first frame size starts at the line rate, its second repetition
    too (never from its own frame size's earlier repetition, so that the
    repetitions stay independent), the next sizes from the nearest one
    measured (256 B from 128 B, not 1024 B), never from the other
    family's mix; every NDR is the known capacity's, and the started
    searches take fewer trials."""
    c = spec.parse_campaign(NEIGHBOURS, "n.toml")
    store, made, make = _run(tmp_path, c)
    run_id = store.start_run(c.name, "test", {"kernel": "x"}, None, c.path, c.sha256, c.text)
    runner.run_points(c, store, run_id, make, lambda line: None)
    tests = store.tests(run_id)
    started = [(t["mix"], t["frame_size"], t["result"]["started_from"]) for t in tests]
    line, at_128 = "the line rate: no neighbouring point measured yet", "the neighbour's result (100/0 at 128 B, earlier in this run)"
    assert started[:6] == [("100/0", 128, line), ("100/0", 128, line), ("100/0", 1024, at_128), ("100/0", 1024, at_128),
                           ("100/0", 256, at_128), ("100/0", 256, at_128)]
    assert started[6] == ("0/100", 128, line) and started[8][2].startswith("the neighbour's result (0/100 at 128 B")
    assert all(49_000 <= t["result"]["ndr_fps"] <= 50_000 for t in tests)
    trials = [len(store.trials(t["id"])) for t in tests]
    assert max(trials[2:6]) < min(trials[:2])
