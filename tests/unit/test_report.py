"""`v6bench report` from committed, measured fixture results
(tests/fixtures/report-run.json.gz, from report-fixture.toml): every view
renders, every figure and table is written, the statistics and the
histogram decoder agree with independent references."""

from __future__ import annotations

import csv
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps

from v6bench.cli import main
from v6bench.report import build, data, hdr, stats
from v6bench.report.views import VIEWS, sections
from v6bench.report.stats import COMPARISON_COLUMNS
from v6bench.report.views.compare import OUTCOME_NAMES
from v6bench.store.db import Store

#: The views the report fixture (a run on plain routers) draws: all but the table sizes' and the connections' (a DUT
#: that keeps state), which have tests of their own (test_connections_campaign.py for the connections).
# The fixture's run has no table, no connections test, and was stored before runs recorded their time by phase
# (the "time" view: tests/unit/test_phases.py).
EVERY_VIEW = set(VIEWS) - {"fib-scale", "connections", "time"}
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.fixture(scope="module")
def store(report_fixture) -> tuple[Store, int]:
    return report_fixture


@pytest.fixture(scope="module")
def written(store, tmp_path_factory) -> tuple[Path, dict]:
    s, run_id = store
    out = tmp_path_factory.mktemp("out")
    return out, build.write(s, run_id, out)


def test_the_fixture_has_every_test_kind(store):
    s, run_id = store
    kinds = {t.kind for t in data.load(s, run_id).tests}
    assert kinds == {"throughput", "loss", "latency", "back-to-back", "recovery", "reset", "rr-latency", "stack-throughput", "mesh"}


def test_every_view_renders_with_data(store):
    s, run_id = store
    secs = sections(data.load(s, run_id))
    assert {x.id for x in secs} == EVERY_VIEW
    for sec in secs:
        assert sec.blocks, sec.id
        for f in sec.figures:
            assert f.series, f.id
            assert any(y is not None for se in f.series for y in se.y), f.id
            assert "[" in f.x_label and "[" in f.y_label or f.x_categories, f"{f.id}: axis labels carry units"
        for t in sec.tables:
            assert t.rows, t.id


def test_throughput_view_has_the_line_rate_and_seed_002_relative_table(store):
    s, run_id = store
    d = data.load(s, run_id)
    thr = VIEWS["throughput"](d)
    fig = thr.figures[0]
    ref = [se for se in fig.series if se.style == "reference"]
    assert ref and "line rate at 1G" in ref[0].name
    # 1 Gb/s at 128 B: 10^9 / 8 / (128 + 20) frames/s (RFC 2544 §26.1)
    assert dict(zip(ref[0].x, ref[0].y))[128] == pytest.approx(1e9 / 8 / 148)
    # The note names the run's link speed (the fixture's: 1G), and that the table's line rate is the path's.
    assert "(RFC 2544 §26.1), here at 1G; the table's line rate is the path's" in fig.note, fig.note
    rel = VIEWS["relative"](d).tables[0]
    assert rel.columns[0] == "frame size [B]"
    assert any("50% IPv4 / 50% IPv6" in c for c in rel.columns) and any("0% IPv4 / 100% IPv6" in c for c in rel.columns)
    ndr = {(t.mix, t.frame_size): [] for t in d.of("throughput")}
    for t in d.of("throughput"):
        ndr[(t.mix, t.frame_size)].append(t.result["ndr_fps"])
    row = next(r for r in rel.rows if r[0] == 128)
    col = next(i for i, c in enumerate(rel.columns) if "0% IPv4 / 100% IPv6" in c)
    assert row[col] == pytest.approx(100 * np.mean(ndr[("0/100", 128)]) / np.mean(ndr[("100/0", 128)]))


def test_delay_view_orders_network_types_as_run_and_counts_every_frame(store):
    s, run_id = store
    d = data.load(s, run_id)
    sec = VIEWS["delay"](d)
    table = next(t for t in sec.tables if t.id == "delay-statistics")
    names = [r[1] for r in table.rows if r[0].startswith("128 B") and "1%" in r[0]]
    assert names[:2] == ["plain IPv4", "plain IPv6"] and "nat IPv4" in names
    frames = sum(s["latency_ns"]["count"] for t in d.of("latency") if t.scenario == "nat" and t.frame_size == 128
                 for x in t.trials if not x["tester_limited"] for s in x["streams"])
    nat = next(r for r in table.rows if r[1] == "nat IPv4" and r[0].startswith("128 B"))
    assert nat[2] == frames


def test_histograms_decode_to_the_engine_own_counts_and_percentiles(store):
    s, run_id = store
    d = data.load(s, run_id)
    checked = 0
    for t in d.of("latency"):
        for x in t.trials:
            for es in x["result"]["engine"]["streams"]:
                if not es.get("latency_histogram"):
                    continue
                h = hdr.decode(es["latency_histogram"])
                lat = es["latency_ns"]
                assert sum(c for _, c in h) == lat["count"]
                assert h[0][0] == pytest.approx(lat["min"], rel=1e-3)
                assert h[-1][0] == pytest.approx(lat["max"], rel=1e-3)
                acc, p50 = 0, None
                for v, c in h:
                    acc += c
                    if acc >= lat["count"] / 2:
                        p50 = v
                        break
                assert p50 == pytest.approx(lat["p50"], rel=2e-3)
                checked += 1
    assert checked >= 10


def test_latency_table_pools_a_points_repetition_blocks(store):
    """A point's latency over all its blocks (the default spreads latency's
    20 trials over 5): one row per point, load and family, its typical
    latency the median of every pooled trial's median, checked with numpy."""
    from dataclasses import replace

    s, run_id = store
    d = data.load(s, run_id)
    # The fixture's latency tests ran one block each: a second block of the same points, a copy of the first.
    again = tuple(replace(t, id=-t.id, repetition=t.repetition + 1) for t in d.of("latency"))
    d2 = replace(d, tests=d.tests + again)
    table = next(t for t in VIEWS["latency"](d2).tables if t.id == "latency")
    col = {c: i for i, c in enumerate(table.columns)}
    assert len(table.rows) == len(next(t for t in VIEWS["latency"](d).tables if t.id == "latency").rows)
    checked = 0
    for row in table.rows:
        tests = [t for t in d2.of("latency") if (t.scenario, t.mix + t.traffic, t.direction, t.frame_size)
                 == tuple(row[col[c]] for c in ("scenario", "mix", "dir", "frame size [B]"))]
        v = int(row[col["family"]].removeprefix("IPv"))
        p50, trials = [], 0
        for t in tests:
            load = next(r for r in t.result["loads"] if r["load"] == row[col["load"]])
            for x in t.trials:
                if x["call"] != "measure" or x["tester_limited"] or not load["load_fps"] \
                        or abs(x["call_args"]["load_fps"] - load["load_fps"]) > 1e-6 * load["load_fps"] \
                        or (x.get("result") or {}).get("suspect_reasons"):
                    continue
                mine = [st["latency_ns"]["p50"] for st in x["streams"] if st["ip_version"] == v and st.get("latency_ns")]
                p50 += mine
                trials += bool(mine)
        assert row[col["blocks"]] == len(tests) == 2
        assert row[col["repetitions"]] == trials
        if p50:
            assert row[col["typical (median) [µs]"]] == pytest.approx(np.median(p50) / 1e3)
            checked += 1
    assert checked >= 4


def test_files_figures_tables_and_csv(written):
    out, info = written
    figs = sorted((out / "figures").glob("*.svg"))
    assert len(figs) == info["figures"] and info["figures"] >= 15
    for svg in figs:
        ET.parse(svg)  # well-formed
        assert svg.with_suffix(".png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert svg.with_suffix(".csv").exists()
    tables = sorted((out / "tables").glob("*.csv"))
    assert len(tables) == info["tables"]
    with (out / "tables" / "ipv4-vs-ipv6.csv").open() as f:
        rows = list(csv.reader(f))
    assert rows[0][:2] == ["metric", "point"] and "p (corrected)" in rows[0] and "95 % CI low %" in rows[0]
    assert any(r[0] == "throughput NDR [fps]" for r in rows[1:])


class _Refs(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.refs: list[str] = []
        self.tags: set[str] = set()

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self.refs += [v or "" for k, v in attrs if k in ("src", "href", "action", "poster", "srcset", "data")]


def test_html_references_nothing_outside_itself(written):
    out, info = written
    text = info["html"].read_text()
    p = _Refs()
    p.feed(text)
    assert all(r.startswith("#") for r in p.refs), [r for r in p.refs if not r.startswith("#")]
    assert not p.tags & {"link", "img", "iframe", "object", "embed"}
    assert "@import" not in text and "url(" not in text.replace("url(#", "")  # url(#id): inside the page
    # The absolute URLs are namespace names (SVG, XLink: the inlined forest plot), which are never fetched.
    assert {u for u in __import__("re").findall(r"https?://[^\s\"')]+", text)} <= {"http://www.w3.org/2000/svg",
                                                                                 "http://www.w3.org/1999/xlink"}


def test_cli_report_writes_the_latest_run_and_says_where(store, tmp_path, capsys):
    s, run_id = store
    assert main(["report", "--db", str(s.path), "--out", str(tmp_path / "r"), "--no-figure-files"]) == 0
    said = capsys.readouterr().out
    assert f"report of run {run_id}: {tmp_path / 'r' / 'report.html'}" in said
    assert (tmp_path / "r" / "report.html").exists() and not list((tmp_path / "r" / "figures").glob("*.png"))
    assert main(["report", "--db", str(tmp_path / "missing.db")]) == 2
    assert not (tmp_path / "missing.db").exists()


# Statistics against published or independent references.

def test_anova_matches_the_textbook_example():
    # Wikipedia "One-way analysis of variance", example: F = 9.3, p ≈ 0.002.
    a = stats.anova({"a1": [6, 8, 4, 5, 3, 4], "a2": [8, 12, 9, 11, 6, 8], "a3": [13, 9, 11, 8, 7, 12]})
    assert a.f == pytest.approx(9.3, abs=0.05) and a.p == pytest.approx(0.002, abs=0.0005)
    assert "differ significantly" in a.verdict
    assert "not tested" in stats.anova({"soft": [1.0], "hard": [2.0]}).verdict


def test_anova_of_seed_000_table_7():
    # Seed 000 Table 7's reset times [s]. By hand: means 67.3 and 66.88, SS between 0.441 (1 df), SS within
    # 1.608 (8 df): F = 0.441 / 0.201 = 2.194. The paper's Table 8 says F = 2.29, p = 0.1684 (SS 0.475 and
    # 1.658: not quite its own Table 7, whose HRT mean is 66.88, not the 66.86 in its text); both: no difference.
    a = stats.anova({"SRT": [67.5, 67.8, 66.9, 67.5, 66.8], "HRT": [66.3, 67.2, 67.4, 66.5, 67.0]})
    assert a.f == pytest.approx(0.441 / (1.608 / 8), rel=1e-6)
    assert 0.15 < a.p < 0.2 and a.verdict.startswith("within noise")


def test_descriptive_statistics_and_histogram_moments():
    xs = [1.0, 2.0, 2.0, 3.0, 10.0]
    d = stats.describe(xs)
    assert (d.n, d.min, d.max, d.mode) == (5, 1.0, 10.0, 2.0)
    assert d.stddev == pytest.approx(np.std(xs, ddof=1))
    assert d.skewness == pytest.approx(sps.skew(xs)) and d.kurtosis == pytest.approx(sps.kurtosis(xs))
    assert stats.describe([1.0, 2.0]).skewness is None
    h = stats.describe_histogram([(1.0, 1), (2.0, 2), (3.0, 1), (10.0, 1)], mode_bin=1.0)
    assert (h.n, h.mean, h.mode) == (5, pytest.approx(np.mean(xs)), 2.5)
    assert h.skewness == pytest.approx(sps.skew(xs))


def test_tests_with_nothing_to_measure_are_shown_as_such_not_drawn(store):
    s, run_id = store
    d = data.load(s, run_id)
    # A latency and a reset test that found no throughput to start from (registry.run's answer).
    blank = {"throughput_fps": 0.0, "applicable": False, "reason": "no load passed without loss: there is no throughput to start from"}
    extra = tuple(data.TestData(10_000 + i, kind, "100/0", 128, False, 1, {"params": {}}, blank, ())
                  for i, kind in enumerate(("latency", "reset", "back-to-back", "recovery")))
    d2 = data.RunData(d.run, d.selftest, d.tests + extra, d.unfinished)
    secs = {x.id: x for x in sections(d2)}
    assert set(secs) == EVERY_VIEW
    b2b = next(t for t in secs["bursts"].tables if t.id == "back-to-back")
    assert sum("no load passed without loss" in str(r[2]) for r in b2b.rows) == 1


def test_the_statistics_open_with_a_summary_of_every_comparison(store):
    s, run_id = store
    d = data.load(s, run_id)
    sec = VIEWS["statistics"](d)
    summary, table = sec.tables[0], sec.tables[1]
    assert summary.id == "summary" and table.id == "ipv4-vs-ipv6"
    delay = [t for t in VIEWS["delay"](d).tables if t.id == "delay-increase"]
    counted = {r[0]: r[1] for r in summary.rows}
    delay += [t for t in sec.tables if t.id == "scenarios"]
    assert sum(v for k, v in counted.items() if "left out" not in k) == len(table.rows) + sum(len(t.rows) for t in delay)
    cols = COMPARISON_COLUMNS
    for r in table.rows:
        n_a, n_b, verdict = r[2 + cols.index("n A")], r[2 + cols.index("n B")], r[-1]
        if verdict.startswith("line-limited"):  # a search at the line rate: the link's, whatever the count
            assert r[2 + cols.index("p")] is None and "no verdict on the router" in verdict
        elif min(n_a, n_b) < stats.MIN_REPETITIONS:
            assert verdict.startswith("not enough repetitions")
        assert "differs" not in verdict or r[2 + cols.index("p (corrected)")] < stats.ALPHA
    assert counted.get(OUTCOME_NAMES["differs"], 0) == sum("differs" in r[-1] for r in table.rows) + sum(
        "differs" in r[-1] for t in delay for r in t.rows)


def test_the_statistics_open_with_a_forest_of_every_comparison(store, written):
    """"Is the difference real?" opens with a picture: every comparison
    with an effect as a row (effect, interval, detectable band, design,
    outcome) in the tables' order; the HTML inlines its SVG, and the
    figure files and CSV hold the same rows."""
    from v6bench.report import verdicts
    from v6bench.report.model import FOREST_COLUMNS, Forest

    s, run_id = store
    d = data.load(s, run_id)
    sec = VIEWS["statistics"](d)
    fo = sec.blocks[0]
    assert isinstance(fo, Forest) and sec.blocks[1].id == "summary"
    compared = [c for _, c in verdicts.of(d).values() if c.diff_pct is not None]
    assert len(fo.rows) == len(compared) and fo.rows
    assert [(r.effect_pct, r.low_pct, r.high_pct, r.detectable_pct, r.design, r.outcome) for r in fo.rows] == \
        [(c.diff_pct, c.ci_low_pct, c.ci_high_pct, c.mde_pct, c.design, c.outcome) for c in compared]
    out, _ = written
    rows = list(csv.reader((out / "figures" / "forest.csv").open()))
    assert tuple(rows[0]) == FOREST_COLUMNS and len(rows) == len(fo.rows) + 1
    ET.parse(out / "figures" / "forest.svg")
    page = (out / "report.html").read_text()
    i = page.index('id="fig-forest"')
    assert page.index('<div class="forest"><svg', i) < page.index('id="tab-summary"')


def test_a_throughput_headline_marks_each_goal_the_tester_capped():
    from v6bench.report.results import headline

    def result(ndr_lb, pdr_lb):
        return {"ndr": {"is_lower_bound": ndr_lb}, "pdr": {"is_lower_bound": pdr_lb}, "ndr_fps": 1000.0, "pdr_fps": 2000.0}

    assert headline("throughput", result(False, False)) == "NDR 1,000 fps, PDR 2,000 fps"
    assert headline("throughput", result(False, True)) == "NDR 1,000 fps, PDR ≥ 2,000 fps"
    assert headline("throughput", result(True, True)) == "NDR ≥ 1,000 fps, PDR ≥ 2,000 fps"


def test_a_reset_headline_says_why_a_kind_has_no_time():
    from v6bench.report.results import headline

    def kind(limited, mean_s):
        return {"repetitions": [{"tester_limited": t, "families": {}} for t in limited],
                "reset_time": {"4": {"mean_s": mean_s}} if mean_s is not None else {}}

    r = {"load_fps": 1.0, "kinds": {"soft": kind([True, True, False], None), "hard": kind([False], 0.153)}}
    assert headline("reset", r) == "soft: no value (2 of 3 repetitions tester-limited); hard: IPv4 0.153 s"
    # seen in make demo: one soft reset whose last frames were lost, in both families (no tester limit)
    lost = {"reset_time_s": None, "recovered": False, "reset_time_at_least_s": 2.934899}
    r["kinds"]["soft"] = {"repetitions": [{"tester_limited": False, "families": {"4": lost, "6": lost}}],
                          "reset_time": {"4": {"mean_s": None}, "6": {"mean_s": None}}}
    assert headline("reset", r).startswith("soft: no value (frames lost up to the end of the traffic in 2 family "
                                           "trial(s), so no gap to measure (≥ 2.93 s)); hard")


def test_loads_are_placed_against_the_line_rate_the_test_stored():
    """On a path that fragments, 100 % of line is the path's line rate (the
    tester's), which the test stored; the report places a trial's load
    against it, not against the nominal rate of the frame size (issue 17)."""
    from v6bench.core.rates import line_rate_fps
    from v6bench.report.group import load_pct

    nominal = line_rate_fps(1e9, 1518)
    path_line = nominal * 0.6  # e.g. IPv4 1518-B frames fragmented over a 1000-B link
    trial = {"call_args": {"load_fps": path_line / 2}}
    stored = data.TestData(1, "loss", "100/0", 1518, False, 1, {"params": {}}, {"line_fps": path_line}, (),
                           link_speed_bps=1e9)
    assert load_pct(stored, trial) == pytest.approx(50.0)
    older = data.TestData(2, "loss", "100/0", 1518, False, 1, {"params": {}}, {}, (), link_speed_bps=1e9)
    assert load_pct(older, trial) == pytest.approx(30.0)  # a run stored before: the nominal line rate


def test_the_table_size_view_draws_each_family_at_its_own_routes(tmp_path, store):
    """A measured fib-scale-quick run (tests/fixtures/fib-scale-run.json.gz, histograms left out): cost per
    frame and NDR against the routes of each family, the internet table putting IPv4 at 1 M and IPv6 at 230 k."""
    import gzip
    import json

    from v6bench.report.views import fib
    from v6bench.store.export import restore
    s = Store(tmp_path / "fib.db")
    run_id = restore(s, json.loads(gzip.decompress((FIXTURES / "fib-scale-run.json.gz").read_bytes())))
    sec = fib.fib_scale(data.load(s, run_id))
    assert {f.id for f in sec.figures} == {"fib-cost", "fib-ndr"} and all(f.x_log for f in sec.figures)
    cost = next(f for f in sec.figures if f.id == "fib-cost")
    assert {se.name: se.x for se in cost.series} == {"IPv4": (1e4, 1e5, 1e6), "IPv6": (1e4, 1e5, 2.3e5)}
    (table,) = sec.tables
    rows = {(r[0], r[1]): r for r in table.rows}
    assert rows[("internet", "IPv4")][2] == 1_000_000 and rows[("internet", "IPv6")][2] == 230_000
    assert all(r[3] > 0 and r[4] > 1000 for r in table.rows), "every size has cost trials, in ns"
    assert fib.fib_scale(data.load(*store)) is None, "a run without tables has no such view"


def test_the_environment_says_which_ports_the_trials_sent():
    """The report's "UDP ports" table (report/views/environment.ports_rows):
    each trial's stored ``ports`` record counted by scenario and mode, with
    the ranges walked; trials stored before the record say nothing."""
    from v6bench.report.data import TestData
    from v6bench.report.views.environment import ports_rows

    rfc = {"asked": "auto", "used": "rfc4814", "src": {"1": [1024, 49184], "2": [49185, 65534]}, "dst": [1, 49151], "seed": 3}
    fixed = {"asked": "auto", "used": "fixed"}
    tests = [TestData(1, "latency", "50/50", 128, False, 0, {"scenario": "native"}, {},
                      tuple({"result": {"ports": rfc}} for _ in range(3))),
             TestData(2, "latency", "50/50", 128, False, 0, {"scenario": "nat"}, {},
                      ({"result": {"ports": fixed}}, {"result": {}})),
             TestData(3, "latency", "50/50", 128, False, 0, {"scenario": "nat"}, {},
                      ({"result": {"ports": {"asked": "fixed", "used": "fixed"}}},))]
    assert ports_rows(tests) == [("nat", "fixed", 2, "-", "-"),
                                 ("native", "rfc4814", 3, "flow 1: 1024-49184, flow 2: 49185-65534", "1-49151")]
