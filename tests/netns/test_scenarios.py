"""A campaign with scenarios, as root, on the tests' own lab site: each
scenario's lab and DUT comes up in turn and goes, every test is stored
with its scenario, the run records each scenario's environment, the
report draws the scenarios side by side as network types (seed 003), and
`make demo`'s last step, `v6bench report`, says where the report is."""

from __future__ import annotations

import json
import sqlite3

import pytest

from cli_site import clean_site, namespaces, remove_run_dir, v6bench  # noqa: F401

pytestmark = [pytest.mark.netns, pytest.mark.usefixtures("clean_site", "remove_run_dir")]

CAMPAIGN = """
name = "scenarios"
[lab]
topology = "b"
link_speed = "100M"
[selftest]
when = "never"
[matrix]
frame_sizes = [128]
drain_s = 0.5
[[scenario]]
name = "ipv4"
[[scenario]]
name = "ipv4-nat"
dut = { nat44 = true }
[[scenario]]
name = "6in4"
dut = { tunnel = "6in4" }
[[test]]
kind = "latency"
scenarios = ["ipv4", "ipv4-nat"]
mixes = ["100/0"]
loads = ["1%"]
trial_duration_s = 0.5
repeat = 2
[[test]]
kind = "latency"
scenarios = ["6in4"]
mixes = ["0/100"]
loads = ["1%"]
trial_duration_s = 0.5
repeat = 2
[design]
seed = 7
"""


def test_a_campaign_runs_each_scenario_on_its_own_lab_and_reports_them_side_by_side(tmp_path):
    f = tmp_path / "scenarios.toml"
    f.write_text(CAMPAIGN)
    db = tmp_path / "r.db"
    r = v6bench("run", str(f), "--db", str(db), "--json", timeout=300)
    assert r.returncode == 0, r.stderr
    assert not namespaces()
    for name, dut in (("ipv4", "plain forwarding"), ("ipv4-nat", "NAT"), ("6in4", "6in4 tunnel")):
        assert f"scenario {name}:" in r.stderr and dut in r.stderr
    out = json.loads(r.stdout)
    env = out["run"]["environment"]
    assert set(env["scenarios"]) == {"ipv4", "ipv4-nat", "6in4"}
    assert env["scenarios"]["ipv4-nat"]["dut"]["config"]["nat44"] is True
    assert "snat" in env["scenarios"]["ipv4-nat"]["dut"]["rulesets"]["r1"]
    assert env["scenarios"]["6in4"]["dut"]["config"]["tunnel"] == "6in4"
    # Each visit's lab, up and down, timed for the next plan (campaign/estimate.py): three visits of plain labs.
    assert list(env["lab_builds_s"]) == ["ns"] and len(env["lab_builds_s"]["ns"]) == 3
    assert all(0 < s < 60 for s in env["lab_builds_s"]["ns"])
    tests = {(t["params"]["scenario"], t["mix"]): t for t in out["tests"]}
    assert set(tests) == {("ipv4", "100/0"), ("ipv4-nat", "100/0"), ("6in4", "0/100")}
    assert all(t["point_key"].startswith(t["params"]["scenario"] + "/") for t in out["tests"])
    # Each scenario's trials ran on its own lab: topology b, frames through it.
    with sqlite3.connect(db) as c:
        rows = c.execute("SELECT t.params_json, x.result_json FROM trials x JOIN tests t ON x.test_id = t.id").fetchall()
    by_scenario: dict[str, list[dict]] = {}
    for p, res in rows:
        by_scenario.setdefault(json.loads(p)["scenario"], []).append(json.loads(res))
    # Two repetitions each; a trial a host stall spoiled is run again
    # (methods/retry.py) and stored too, counted in the test's result.
    repeated = {k[0]: (t["result"] or {}).get("trials_repeated", 0) for k, t in tests.items()}
    assert {k: len(v) for k, v in by_scenario.items()} == {k: 2 + repeated[k] for k in ("ipv4", "ipv4-nat", "6in4")}
    for k, v in by_scenario.items():
        assert sum(bool(x["tester_limited"] or x.get("suspect_reasons")) for x in v) >= repeated[k], k
    assert all(x["lab"]["topology"] == "b" and x["rx_frames"] > 0 for v in by_scenario.values() for x in v)

    # Nothing left to do: a resume brings no lab up and keeps the results.
    again = v6bench("run", str(f), "--db", str(db), "--resume", timeout=120)
    assert again.returncode == 2 and "finished; run it without --resume" in again.stderr, again.stderr

    rep = v6bench("report", "--db", str(db), "--out", str(tmp_path / "rep"), "--no-figure-files", timeout=120)
    assert rep.returncode == 0, rep.stderr
    assert f"{tmp_path / 'rep' / 'report.html'}" in rep.stdout
    with (tmp_path / "rep" / "tables" / "delay-statistics.csv").open() as fh:
        names = [line.split(",")[1] for line in fh.read().splitlines()[1:]]
    assert names == ["ipv4 IPv4", "ipv4-nat IPv4", "6in4 IPv6"]
