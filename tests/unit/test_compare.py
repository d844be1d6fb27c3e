"""Runs compared across machines (report/across.py), before and after a
change (report/change.py) and over time (report/trend.py), on copies of a
measured run (tests/fixtures/fib-scale-run.json.gz) given another machine,
kernel or delay: each copy's IPv6 (or every) per-trial delay multiplied by
a known factor, so the answer is known. Pooling, before/after and trend
run on both databases a store lives in (SQLite, and the session's
PostgreSQL server: tests/postgres_server.py)."""

from __future__ import annotations

import copy
import csv
import gzip
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from v6bench.cli import main as cli_main
from v6bench.report import across, change, meta, trend
from v6bench.store.db import Store
from v6bench.store.export import restore

FIXTURE = json.loads(gzip.decompress((Path(__file__).parent.parent / "fixtures" / "fib-scale-run.json.gz").read_bytes()))
AMD = {"vendor": "AuthenticAMD", "model_name": "AMD EPYC", "family": 26, "model": 2, "stepping": 1, "cpus": 2,
       "hypervisor": "KVM", "kernel": "6.18"}
XEON = {**AMD, "vendor": "GenuineIntel", "model_name": "Intel Xeon", "family": 6, "model": 143, "stepping": 8}
#: The comparison the tests read: paired per-trial median delay at 10 k routes.
MEDIAN_10K = "median latency 10k ×2 flows 128 B at 60kfps (50/50) (IPv6, paired)"


def _copy(store: Store, host: dict, ipv6: float = 1.0, every: float = 1.0, kernel: str | None = None,
          started: float | None = None, noise: np.random.Generator | None = None) -> int:
    """The fixture run as if measured on ``host``: IPv6 delays × ``ipv6``, all delays × ``every``; with
    ``noise``, each trial's delays of each stream × its own draw of e^N(0, 1 %), both families alike."""
    d = copy.deepcopy(FIXTURE)
    env = d["run"]["environment"]
    env["host"] = host
    env["cpu_model"], env["cpus"] = host["model_name"], host["cpus"]
    if kernel:
        env["kernel"] = kernel
    for t in d["tests"]:
        for x in t.get("trials", []):
            for s in x.get("streams") or []:
                f = every * (ipv6 if s.get("ip_version") == 6 else 1.0)
                f *= math.exp(noise.normal(0.0, 0.01)) if noise is not None else 1.0
                for k in ("p50", "p99"):
                    if (s.get("latency_ns") or {}).get(k) is not None:
                        s["latency_ns"][k] *= f
    run_id = restore(store, d)
    if started is not None:
        store.execute("UPDATE runs SET started_at_unix_s=? WHERE id=?", (started, run_id))
    return run_id


def _pooled(store: Store, ids: list[int], by: str | None = None) -> across.Pooled:
    (p,) = [p for p in across.pool(across.collect(store, ids), by) if across.describe_key(p.key) == MEDIAN_10K]
    return p


def test_machines_that_differ_are_pooled_and_the_machine_explains_it(store_location, tmp_path):
    with Store(store_location) as s:
        ids = [_copy(s, AMD), _copy(s, AMD, ipv6=1.004), _copy(s, XEON, ipv6=1.10), _copy(s, XEON, ipv6=1.104)]
        p = _pooled(s, ids, by="machine")
        assert [round(r.effect_pct, 1) for r in p.runs] == pytest.approx([1.2, 1.6, 11.3, 11.7], abs=0.15)
        assert p.fit.k == 4 and p.tau_pct > 3 and p.fit.i2_pct > 90 and p.q_p_adjusted < 0.05
        assert p.verdict.startswith("IPv6 slower on every machine: pooled +") and "machines differ by τ" in p.verdict
        # Two runs a machine: nested in two machines, the pooled interval rests on 1 df, not 3, and spans 0.
        assert (p.nested_fit.m, p.nested_fit.df) == (2, 1) and "runs nested in 2 machines, t with 1 df" in p.verdict
        assert p.low_pct < 0 < p.high_pct and "not significant after the correction (4 runs, t with 1 df)" in p.verdict
        m = p.moderation
        assert m.levels == ("AMD EPYC (family 26 model 2 stepping 1), 2 CPUs, KVM",
                            "Intel Xeon (family 6 model 143 stepping 8), 2 CPUs, KVM") and m.p < 0.05 and m.r2_pct > 90
        assert m.level_pct == pytest.approx((1.4, 11.5), abs=0.3) and m.verdict.startswith("machine explains")
        # The command line: the runs with their machines, each run's effect, the pooled one; a report with forests by run.
        assert cli_main(["compare", *map(str, ids), "--db", store_location, "--by", "machine", "--only",
                         "median latency 10k ×2 flows 128", "--report", str(tmp_path / "cmp")]) == 0
    html = (tmp_path / "cmp" / "report.html").read_text()
    assert "Intel Xeon (family 6 model 143 stepping 8), 2 CPUs, KVM" in html and "pooled over 4 runs" in html
    assert (tmp_path / "cmp" / "tables" / "pooled.csv").exists()
    # The forest: runs grouped by machine, each machine's two runs pooled alone after them, the diamond at the foot.
    amd, xeon = m.levels
    forests = {f: list(csv.reader(f.open()))[1:] for f in (tmp_path / "cmp" / "figures").glob("forest-*.csv")}
    (forest, rows), = [(f, rows) for f, rows in forests.items() if float(rows[0][2]) == pytest.approx(p.runs[0].effect_pct)]
    assert [(r[0].split(" (")[0] if r[0].startswith("run ") else r[0], r[1]) for r in rows] == [
        ("run 1", "paired"), ("run 2", "paired"), (f"2 runs pooled: {amd}", "machine pooled"),
        ("run 3", "paired"), ("run 4", "paired"), (f"2 runs pooled: {xeon}", "machine pooled"),
        ("pooled over 4 runs (2 machines, runs nested, Hartung–Knapp)", "pooled")]
    alone = meta.fit([r.log_ratio[0] for r in p.runs[:2]], [r.log_ratio[1] for r in p.runs[:2]])
    assert float(rows[2][2]) == pytest.approx(100 * math.expm1(alone.beta[0]), rel=1e-6)
    assert [float(x) for x in rows[2][3:5]] == pytest.approx([100 * math.expm1(b) for b in alone.beta_ci[0]], rel=1e-6)
    svg = (tmp_path / "cmp" / "figures" / forest.with_suffix(".svg").name).read_text()
    assert "machine pooled (its interval)" in svg and "pooled (its interval)" in svg


def test_an_a_a_pair_of_runs_finds_no_difference_between_runs(tmp_path):
    with Store(tmp_path / "r.db") as s:
        ids = [_copy(s, AMD), _copy(s, AMD, every=1.01), _copy(s, AMD, every=0.99)]
        for p in across.pool(across.collect(s, ids)):
            assert not p.verdict.startswith(("runs disagree", "consistent across runs: IPv6")), p.verdict


def test_an_a_a_set_of_runs_with_their_own_noise_finds_no_difference_between_runs(tmp_path):
    """Four runs of one machine, each trial's delays drawn anew (seeded): the runs
    differ by chance as real ones do, so Q is not 0 by construction, yet no
    pooled comparison says the runs disagree, and each run's own standard
    error (from its values) is what the pooling uses."""
    rng = np.random.default_rng(64)
    with Store(tmp_path / "r.db") as s:
        ids = [_copy(s, AMD, noise=rng) for _ in range(4)]
        pooled = across.pool(across.collect(s, ids))
    fitted = [p for p in pooled if p.fit is not None]
    delays = [p for p in fitted if p.key[0].startswith("median latency")]  # what the noise moves
    assert delays and all(p.fit.q > 0 for p in delays)
    assert not [p.verdict for p in fitted if p.verdict.startswith("runs disagree") or "runs disagree in size" in p.verdict]
    assert all(r.log_ratio == pytest.approx((r.log_effect[0], r.log_effect[1] ** 2 * r.log_effect[2] / (r.log_effect[2] - 2)),
                                            rel=1e-12) for p in fitted for r in p.used)


def test_two_runs_of_one_campaign_compared_as_before_after_make_no_claim(tmp_path, capsys):
    with Store(tmp_path / "r.db") as s:
        a, b = _copy(s, AMD), _copy(s, AMD, every=1.2)
        ba = change.compare(s, a, b)
    assert ba.short.startswith("not enough runs: the store holds 2 finished run(s)") and "1 more time(s)" in ba.short
    assert ba.changes and all(c.verdict == "not enough runs" and c.p is None for c in ba.changes)
    assert cli_main(["compare", str(a), str(b), "--db", str(tmp_path / "r.db"), "--only", "median latency 10k"]) == 0
    out = capsys.readouterr().out
    assert "before/after: run 1 → run 2" in out and "not enough runs" in out and "changed:" not in out


def test_a_change_beyond_the_labs_run_to_run_spread_is_found_and_an_a_a_one_is_not(store_location, tmp_path, capsys):
    """Three runs before an upgrade, one after: not enough on the after side, and it says how many more.
    Three after: each side's geometric mean and its own spread, Welch's t as scipy computes it on the logs."""
    from scipy import stats as sps
    with Store(store_location) as s:
        a1, a2, a3 = _copy(s, AMD), _copy(s, AMD, every=1.01), _copy(s, AMD, every=0.99)
        b1 = _copy(s, AMD, every=1.2, kernel="6.19")  # the upgrade: another kernel, 20 % more delay
        short = change.compare(s, a1, b1)
        assert short.short.endswith("needs 3 of each (each side's own run-to-run spread): repeat run 4's set-up 2 more time(s), unchanged")
        assert all(c.verdict == "not enough runs" for c in short.changes)
        b2, b3 = _copy(s, AMD, every=1.2 * 1.02, kernel="6.19"), _copy(s, AMD, every=1.2 * 0.995, kernel="6.19")
        upgrade = change.compare(s, a1, b1)
        assert not upgrade.short and upgrade.repeats == {"before": [a1, a2, a3], "after": [b1, b2, b3]}
        delays = [c for c in upgrade.changes if c.metric.startswith("median latency") and "IPv4" in c.series]
        assert delays and all(c.verdict.startswith("changed: 21 % higher") and (c.runs_before, c.runs_after) == (3, 3)
                              for c in delays)
        la, lb = np.log([1, 1.01, 0.99]), np.log([1.2, 1.2 * 1.02, 1.2 * 0.995])
        welch = sps.ttest_ind(lb, la, equal_var=False)
        for c in delays:
            assert c.change_pct == pytest.approx(100 * math.expm1(lb.mean() - la.mean()), abs=1e-6)
            assert c.spread_df == pytest.approx(welch.df, rel=1e-9) and c.p == pytest.approx(welch.pvalue, rel=1e-6)
            lo, hi = welch.confidence_interval()
            assert (c.low_pct, c.high_pct) == pytest.approx((100 * math.expm1(lo), 100 * math.expm1(hi)), rel=1e-6)
        same = change.compare(s, a1, a2)
        assert not same.short and all(c.verdict.startswith("no change beyond the run-to-run spread") for c in same.changes)
        # An A/A check of two set-ups that differ only in name: no change, the change it could have seen and the runs for 1 %.
        c1 = _copy(s, AMD, every=1.005, kernel="6.20")
        c2, c3 = _copy(s, AMD, every=1.015, kernel="6.20"), _copy(s, AMD, every=0.995, kernel="6.20")
        aa = change.compare(s, a1, c1)
        assert aa.repeats["after"] == [c1, c2, c3]
        d = [c for c in aa.changes if c.metric.startswith("median latency") and "IPv4" in c.series]
        assert d and all(c.verdict.startswith("no change beyond the run-to-run spread (±1 % a run over 3 before")
                         and "runs a side would detect ±1 %" in c.verdict for c in d), d[0].verdict
    assert cli_main(["compare", str(a1), str(b1), "--db", store_location, "--only", "10k ×2 flows 128 B"]) == 0
    assert re.search(r"\(runs 3 → 3\) \(\+20\.\d\d %\): changed: 21 % higher", capsys.readouterr().out)


def test_a_trend_marks_the_machine_change_and_finds_the_step(store_location, tmp_path, capsys):
    with Store(store_location) as s:
        for i, (host, f) in enumerate([(AMD, 1.0), (AMD, 1.003), (XEON, 1.10), (XEON, 1.098)]):
            _copy(s, host, ipv6=f, started=1_800_000_000 + 3600 * i)
        (t,) = [t for t in trend.trends(s, "fib-scale-quick") if t.name == MEDIAN_10K]
    assert [e.run_id for e in t.runs] == [1, 2, 3, 4] and t.machine_changes == (2,)
    assert t.change_at == 2 and t.verdict.startswith("a change point before run 3") and "machine changed there too" in t.verdict
    assert cli_main(["trend", "fib-scale-quick", "--db", store_location, "--only", "median latency 10k ×2 flows 128"]) == 0
    assert "◆ machine changed ▲ change point run 3" in capsys.readouterr().out


def test_the_command_line_starts_without_the_statistics():
    """Every v6bench command builds the whole parser (compare's --by choices among it): importing the statistics
    there cost each command 0.7 s (make test calls the command line hundreds of times)."""
    import subprocess
    import sys

    code = ("import sys; from v6bench.cli import parser; parser(); "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'scipy', 'statsmodels', 'matplotlib', 'psycopg'}))")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "[]"


def test_repeats_of_a_campaign_with_scenarios_have_one_set_up_whichever_scenario_ran_first():
    """The environment's top level is the scenario the randomized order visited first: it must not make two
    repeats of one campaign look like two configurations (before/after would then find no repeats)."""
    from v6bench.report.attributes import attributes

    env = FIXTURE["run"]["environment"]
    names = sorted(env["scenarios"])
    assert len(names) >= 2
    runs = [{**FIXTURE["run"], "environment": {**env, **{k: env["scenarios"][n][k] for k in ("lab", "dut")}}} for n in names]
    assert attributes(runs[0])["config"] == attributes(runs[1])["config"]
    assert attributes(runs[0])["dut"] == attributes(runs[1])["dut"]


def _run(run_id: int, effect: float, se: float, host: str = "AMD") -> across.RunEffect:
    return across.RunEffect(run_id, host, {"machine": host}, 0.0, effect, effect - 2 * se, effect + 2 * se, "none", "",
                            6, 6, 20.0, 20.0, "IPv4", (math.log1p(effect / 100), se / 100, 5.0))


@pytest.mark.parametrize("se_pct, agree", [(0.1, True), (1.0, False)])
@pytest.mark.parametrize("hosts, who", [(("AMD",), "run"), (("AMD", "XEON"), "machine")])
def test_runs_are_said_to_agree_only_where_q_could_have_seen_the_stated_tau(se_pct, agree, hosts, who):
    """Four runs within their noise of each other: with standard errors of 0.1 %
    Q would have seen a τ of 1 % (and says how small); with 1 % it could not,
    and the words say so instead of claiming agreement: of runs on one machine,
    of machines where there are several."""
    runs = tuple(_run(i, 0.5 + 0.1 * se_pct * (-1) ** i, se_pct, hosts[i % len(hosts)]) for i in range(4))
    f = meta.fit([r.log_ratio[0] for r in runs], [r.log_ratio[1] for r in runs])
    p = across.Pooled(("median latency [µs]", "x", "IPv6", "paired"), runs, "slower", f, 0.5, 0.2, 0.8, 0.0,
                      p_adjusted=0.5, q_p_adjusted=f.q_p)
    words = across._verdict(p)
    assert (f"consistent across {who}s: no difference detected" in words) is agree
    assert (f"no more spread between {who}s than within (Q could have seen τ ≥ 0." in words) is agree
    assert (f"too few {who}s to tell whether they differ (Q could have seen only τ ≥ " in words) is not agree
