"""The verdicts' controls on the emulated lab (campaigns/control.toml): an
A/A comparison gives no "differs" over at least 10 comparisons, and known
differences are found: a DUT limited to 30,000 against 20,000 frames/s,
and the router inline (in the tester's system call) against on its own CPU.

The campaign runs in one fixed randomized order (``[design] seed`` added
to the test's copy), so every run of the suite measures the same schedule.
What stays random is the lab's noise, and so the A/A rule is a stated
chance: the report's verdicts hold the false discovery rate at 5 % over
the A/A controls, so a lab with nothing wrong gives one chance "differs"
in at most 1 run in 20. The test fails when an A/A comparison differs
beyond what chance gives in 1 run in 200 (its Benjamini–Hochberg p below
:data:`AA_CHANCE`), or when more than one does: a real defect (the one
this control found on 2026-11-24 read Benjamini–Hochberg p 0.018 on one
comparison, and would have shown again on the next run) is not hidden
for long, and a passing suite does not fail 1 run in 20 by design."""

from __future__ import annotations

import os
import shutil
import warnings
from pathlib import Path

import pytest

from cli_site import clean_site, remove_run_dir, v6bench  # noqa: F401
from v6bench.report import data, verdicts
from v6bench.store.db import Store

pytestmark = [pytest.mark.netns, pytest.mark.usefixtures("clean_site", "remove_run_dir")]

CAMPAIGN = Path(__file__).resolve().parents[2] / "campaigns" / "control.toml"
#: The test's fixed order of the campaign's blocks (the campaign file itself draws one per run).
DESIGN_SEED = 2026
#: The test's copy in place of the campaign's, for make test's time budget: two of its four latency
#: loads (the lowest, where the tester's receive side sleeps, and the highest), the throughput searches
#: to 5 % (measured: 9-10 trials a search at 2 %, 11-13 s; the known +50 % stays far beyond it), and
#: 0.1 s of drain instead of 0.2 (a frame crosses the namespace router in microseconds) and of pause
#: after learning instead of the engine's 0.5 s (the router has nothing to settle): a 0.3-s trial took
#: 1.25 s with them.
COPY = (('loads = ["2kfps", "8kfps", "12kfps", "16kfps"]', 'loads = ["2kfps", "16kfps"]'),
        ("resolution = 0.02", "resolution = 0.05"),
        ("drain_s = 0.2", "drain_s = 0.1\nsettle_s = 0.1"))
#: An A/A "differs" below this Benjamini–Hochberg p fails the test (chance: at most 1 run in 200).
AA_CHANCE = 0.005
#: The tester's self-tested capacity [frames/s] the controls need: the searches go above the 30,000-frame/s
#: DUT and the latency trials run at up to 16,000 a second, and a load above 90 % of the capacity is the
#: tester's limit; twice that DUT's. On Xeon-167 (2026-12-01) the self-test found 260,000-420,000 in most
#: hours and 20,684 and 18,219 in one (the latency floor's error bar 21.7 us against 1.9): every search
#: stopped at the tester's limit (a lower bound) and spoiled trials left A/A comparisons short, no verdict
#: on the DUTs, right or wrong. Below it the test skips, saying why.
TESTER_NEEDS_FPS = 60_000


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="the split arrangement needs 2 CPUs")
def test_aa_control_finds_nothing_and_known_differences_are_found(tmp_path):
    f = tmp_path / "control.toml"
    shutil.copy(CAMPAIGN, f)
    text = f.read_text()
    assert "[design]" not in text and all(text.count(old) == 1 for old, _ in COPY)
    for old, new in COPY:
        text = text.replace(old, new)
    f.write_text(text + f"\n[design]\nseed = {DESIGN_SEED}\n")
    db = tmp_path / "r.db"
    r = v6bench("run", str(f), "--db", str(db), timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    assert f"design: randomized order, 5 repetition block(s), seed {DESIGN_SEED}" in r.stderr
    with Store(db) as store:
        run_id = store.latest_run_id()
        decided = verdicts.of(data.load(store, run_id))
        design = store.run(run_id)["environment"]["design"]
        scenarios_env = store.run(run_id)["environment"]["scenarios"]
        capacity_fps = store.selftest(scenarios_env["limit-30k"]["selftest_id"])["capacity"]["128"]["capacity_fps"]
    # Each scenario was checked against the self-test of its own CPU arrangement.
    tested = {name: e["selftest_id"] for name, e in scenarios_env.items()}
    assert None not in tested.values() and tested["inline"] != tested["limit-20k"] == tested["limit-30k"], tested
    assert design["blocks"] == 5 and len(design["schedule"]) == 45
    # The schedule interleaves: every block visits each of the 4 scenarios (the lab switches between them).
    scenario = [k.split("/")[0] for k in design["schedule"]]
    assert sum(a != b for a, b in zip(scenario, scenario[1:])) >= 4 * 5 - 5

    if capacity_fps < TESTER_NEEDS_FPS:
        pytest.skip(f"the tester's self-test found {capacity_fps:,.0f} frames/s, below the {TESTER_NEEDS_FPS:,} the "
                    "controls need: their trials measured the tester (a host far slower than usual), not the DUTs")
    # The A/A comparisons a verdict was reached in: one a trial's lost value (a tester stall, the DUT's CPUs
    # busy with something else for its cost per frame) left short of 5 a side says "not enough repetitions",
    # which is no verdict, right or wrong.
    # Nor is "not measured" (a search stopped at the tester's limit: a lower bound) a verdict.
    aa = [(p, c) for (metric, point, b), (p, c) in decided.items() if "A/A control" in b and c.outcome in ("differs", "none")]
    assert len(aa) >= 8, [p.key for p, _ in aa]  # NDR, PDR, and per load and family the delays and the cost per frame
    chance = [(p.key, c.verdict) for p, c in aa if c.outcome == "differs"]
    assert len(chance) <= 1 and all(c.p_adjusted >= AA_CHANCE for _, c in aa if c.outcome == "differs"), chance
    if chance:
        warnings.warn(f"one A/A comparison differs, at a rate chance gives (≤ 1 run in 20): {chance}")
    assert all(c.mde_pct is not None and "over the A/A controls" in c.verdict for _, c in aa)

    limit = [(p, c) for (metric, point, b), (p, c) in decided.items() if b == "limit-30k" and metric.startswith("throughput")]
    assert {p.metric for p, _ in limit} == {"throughput NDR [fps]", "throughput PDR [fps]"}
    # A search whose loads above the DUT the host spoiled at every retry stopped there, a lower bound left out: with
    # one such search the 30,000-frame/s DUT has 4 builds, no verdict (a host at 13 % steal, 2026-12-02: 1 and 2 of
    # 5 left out, self-tested at 145,368 frames/s). The tester's doing, as below its capacity above.
    short = [(p.metric, p.excluded_by) for p, c in limit if c.outcome == "few" and p.excluded_by.get("limit-30k")]
    if short:
        pytest.skip(f"searches of the 30,000-frame/s DUT stopped at loads the host spoiled at every retry (lower "
                    f"bounds, left out): {short}; its known difference has too few builds for a verdict")
    for p, c in limit:
        assert c.outcome == "differs", c.verdict
        assert 30 < c.diff_pct < 70 and c.ci_low_pct > 20, (p.key, c.diff_pct, c.ci_low_pct)

    inline = [(p, c) for (metric, point, b), (p, c) in decided.items() if b.startswith("inline")]
    assert len(inline) == 4  # 2 loads × 2 families
    # Inline, the delay is about the tester's own floor (AF_XDP ports: 3–5 µs); on a CPU of its own the router adds a
    # wake-up across vCPUs (8–15 µs at 2 kfps, 15–21 µs above). At 16 kfps (from 8 kfps up (where the tester's receive side stays
    # awake)) the effect is at least a third in both families (measured −83 to −94 %) and found, corrected, its interval
    # excluding 0, in one at least: one trial a host stall slowed among an arrangement's five can leave the other's rank
    # test short (a fresh clone of 2026-12-01, Xeon-167: IPv4 −88 %, differs; IPv6 −83 %, p 0.095). At 2 kfps the inline floor itself varies from trial to trial (the tester's receive thread wakes
    # for each frame: 4.2–9 µs), so the effect ranges from about +10 % to −70 % by those figures (a fresh clone of
    # 2026-11-26: IPv4 −68 %, IPv6 −19 %): there a "differs" is only required never to point the wrong way.
    def shown(c):
        return (c.outcome, c.diff_pct, c.ci_high_pct, c.p, c.p_adjusted)

    awake = [(p, c) for p, c in inline if not p.key[1].endswith(" 2kfps")]
    assert len(awake) == 2 and all(c.diff_pct < -30 for _, c in awake), [(p.key, shown(c)) for p, c in awake]
    asleep = [(p, c) for p, c in inline if p.key[1].endswith(" 2kfps")]
    assert all(not (c.outcome == "differs" and c.diff_pct > 0) for _, c in asleep), [(p.key, shown(c)) for p, c in asleep]
    assert any(c.outcome == "differs" and c.ci_high_pct < 0 for _, c in awake), \
        [(p.key, shown(c)) for p, c in awake]
