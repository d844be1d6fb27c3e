"""How small a difference v6bench can see on the emulated lab (issue 40).

One campaign, ``--blocks`` randomized repetition blocks (10 by default) on
topology a, 1G links, 128-B frames, in seven scenarios that differ only
in R1's access lists (lab/model/dut.py):

- ``plain``: forwarding alone;
- ``acl10-ipv6``, ``acl100-ipv6``: a list of K rules (K − 1 non-matching
  denies, then the permit) that only IPv6 frames walk, IPv4 forwarded
  unfiltered beside them;
- ``acl10-ipv4``, ``acl100-ipv4``: the same for IPv4 frames only;
- ``acl10-flow2``, ``acl100-flow2``: the list only IPv6's second flow
  walks (``scope = "flow2"``), its first flow the control.

In each scenario and block:

- a paired latency trial at ``--delay-load`` (20 kframes/s: frames do not
  overlap in the router; bench/log/performance-2026-11.md): both families in one 50/50
  stream, each as two flows (``flows = 2``): IPv6's median delay against
  IPv4's in the same trial, and each family's second flow against its
  first (the A/A controls inside the trial, or the scoped list against
  its control);
- except in the scoped scenarios, two trials at ``--cost-load``, IPv4
  alone and IPv6 alone (``families = "separate"``), for the DUT's CPU
  time per forwarded frame: IPv6's extra cost is the slope over the IPv6
  share with a level per block (report/regression.py);
- one trial at ``--cost-load`` sent in runs (``runs_s`` = 0.1 s: each
  stream's frames 0.1 s in a row, the streams in turn; two flows a
  family): each family's and each flow's cost per frame read inside the
  trial (lab/machine/cost.py), compared paired, and each family's flow 2 against
  flow 1 (an A/A control, or the scoped list against its control).

Prints, from the run's own report (one Benjamini–Hochberg correction over
the comparisons, one over the A/A controls):

(a) the A/A controls: how many, how many "differs" (the target: none);
(b) per scenario, IPv6 − IPv4 in median delay (ns, %) and in cost per frame
    (ns, %) with their 95 % intervals, and what the list added beside
    plain forwarding: the K-rule lists must show the right sign (IPv6 dearer
    when IPv6 walks them, cheaper when IPv4 does) and grow with K;
(c) the smallest difference each comparison could have detected, against
    the targets on this 2-vCPU machine at 10 blocks: median delay ±0.2 µs
    (±1.5 %), cost per frame ±3 %.

Run as root: `make bench` or `.venv/bin/python bench/sensitivity.py`
(about 15 minutes at 10 blocks). ``--db`` and ``--resume`` continue a run
cut short, as bench/repeatability.py does; ``--db`` with ``--reread``
analyses the newest run in it again without measuring. Each scenario
against plain forwarding across trials (the report's network types) is
not among the rows: this bench is about IPv6 − IPv4.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import bench_log
from v6bench import stopping
from v6bench.campaign import runner, spec
from v6bench.lab.model.site import Site
from v6bench.report import data as report_data
from v6bench.report import verdicts
from v6bench.store.db import Store

COMMAND = "bench/sensitivity.py"
#: The targets at 10 blocks (issue 40): median delay, absolute [µs] and relative [%]; cost per frame [%].
TARGET_MEDIAN_US, TARGET_MEDIAN_PCT, TARGET_COST_PCT = 0.2, 1.5, 3.0
#: The runs of the cost trials sent in runs [s] (core/frames.Traffic.runs_s): 6,000 frames at 60 kframes/s.
RUNS_S = 0.1
#: The scenarios: R1's [dut] table each (lab/model/dut.py); the first is plain forwarding.
SCENARIOS = {
    "plain": {},
    "acl10-ipv6": {"acl": 10, "acl_family": "ipv6"},
    "acl100-ipv6": {"acl": 100, "acl_family": "ipv6"},
    "acl10-ipv4": {"acl": 10, "acl_family": "ipv4"},
    "acl100-ipv4": {"acl": 100, "acl_family": "ipv4"},
    "acl10-flow2": {"acl": 10, "acl_family": "ipv6", "scope": "flow2"},
    "acl100-flow2": {"acl": 100, "acl_family": "ipv6", "scope": "flow2"},
}
SCOPED = [n for n, dut in SCENARIOS.items() if dut.get("scope") == "flow2"]


def campaign(blocks: int, delay_load: str, cost_load: str, duration_s: float) -> spec.Campaign:
    lat = {"kind": "latency", "loads": [delay_load], "trial_duration_s": duration_s, "repeat": 1, "flows": 2}
    cost = {"kind": "latency", "loads": [cost_load], "trial_duration_s": duration_s, "repeat": 1,
            "families": "separate", "scenarios": [n for n in SCENARIOS if n not in SCOPED]}
    runs = {"kind": "latency", "loads": [cost_load], "trial_duration_s": duration_s, "repeat": 1, "flows": 2,
            "runs_s": RUNS_S}
    d = {"name": f"sensitivity-{blocks}-{delay_load}-{cost_load}", "lab": {"topology": "a", "link_speed": "1G"},
         "selftest": {"when": "if-stale", "frame_sizes": [128]},
         "matrix": {"mixes": ["100/0", "0/100"], "frame_sizes": [128], "repeat": blocks, "drain_s": 0.5},
         "scenario": [{"name": n, "dut": dut} for n, dut in SCENARIOS.items()],
         "test": [lat, cost, runs]}
    return spec.from_dict(d, json.dumps(d, sort_keys=True), d["name"])


def _ns(c, pct: float | None) -> float | None:
    """A comparison's % of A's centre in ns (centres in µs for delays, ns for costs)."""
    return None if pct is None or c.center_a is None else pct / 100 * c.center_a


def rows(run: report_data.RunData, delay_load: str) -> tuple[list[dict], list[dict]]:
    """The A/A controls and, per scenario and metric, the family comparison
    (the delays of the paired trials at ``delay_load``; the cost per frame
    of the separate trials' mix regression and of the trials in runs)."""
    controls, effects = [], []
    for p, c in verdicts.of(run).values():
        if p.control:
            controls.append({"point": p.point, "metric": p.metric, "p_adjusted": c.p_adjusted, "outcome": c.outcome,
                             "diff_pct": c.diff_pct, "mde_pct": c.mde_pct})
            continue
        delays = p.metric == "median latency [µs]" and c.design == "paired" and f" at {delay_load} " in p.point
        costs = p.metric == "cost per frame [ns]" and c.design in ("paired", "mix regression")
        if not (delays or costs):
            # the separate trials' delays, compared unpaired, those in runs, and each scenario against plain
            # forwarding across trials (report/scenario_pairs.network_types) are not what this bench measures
            continue
        scenario = p.point.split(" ")[0]
        unit = 1e3 if p.metric.startswith("median") else 1.0  # ns
        runs = "-s runs " in p.point  # the test's label (core/frames.Traffic.describe): "… in 0.1-s runs 128 B …"
        flow = p.name_a == "flow 1"
        metric = p.metric.split(" [")[0] + {(False, False): "", (False, True): " (flow 2 − 1)", (True, False): " (runs)",
                                            (True, True): " (runs, flow 2 − 1)"}[(runs, flow)]
        effects.append({"scenario": scenario, "metric": metric, "design": c.design, "n": c.n_a,
                        "a": None if c.center_a is None else c.center_a * unit,
                        "diff_pct": c.diff_pct, "ci_pct": (c.ci_low_pct, c.ci_high_pct), "mde_pct": c.mde_pct,
                        "diff_ns": None if c.diff_pct is None else _ns(c, c.diff_pct) * unit,
                        "ci_ns": tuple(None if x is None else _ns(c, x) * unit for x in (c.ci_low_pct, c.ci_high_pct)),
                        "mde_ns": None if c.mde_pct is None else _ns(c, c.mde_pct) * unit, "verdict": c.verdict})
    return controls, effects


def _f(x: float | None, fmt: str = "+.1f") -> str:
    return "-" if x is None else format(x, fmt)


def report(controls: list[dict], effects: list[dict]) -> None:
    wrong = [c for c in controls if c["outcome"] == "differs"]
    print(f"(a) A/A controls: {len(controls)} comparisons, {len(wrong)} 'differs' (target: 0, and 20 or more)"
          + ("" if len(controls) >= 20 else "  NOT ENOUGH COMPARISONS"))
    for c in wrong:
        print(f"    differs: {c['metric']} {c['point']}: {c['diff_pct']:+.2f} % (corrected p {c['p_adjusted']:.3g})")
    print("(b) IPv6 − IPv4 per scenario, and beside plain forwarding")
    base = {e["metric"]: e for e in effects if e["scenario"] == "plain"}
    print(f"    {'scenario':<13} {'metric':<34} {'design':<15} {'n':>3} {'IPv4 [ns]':>10} {'IPv6−IPv4 [ns]':>15} "
          f"{'95 % CI [ns]':>20} {'%':>7} {'beside plain [ns]':>18}")
    for e in sorted(effects, key=lambda e: (list(SCENARIOS).index(e["scenario"]) if e["scenario"] in SCENARIOS else 99,
                                            e["metric"])):
        ref = base.get(e["metric"])
        beside = e["diff_ns"] - ref["diff_ns"] if ref and e["diff_ns"] is not None and ref["diff_ns"] is not None else None
        lo, hi = e["ci_ns"]
        print(f"    {e['scenario']:<13} {e['metric']:<34} {e['design']:<15} {e['n']:>3} {_f(e['a'], ',.0f'):>10} "
              f"{_f(e['diff_ns']):>15} {_f(lo) + ' … ' + _f(hi):>20} {_f(e['diff_pct'], '+.2f'):>7} {_f(beside):>18}")
    for line in known_costs(effects):
        print("    " + line)
    print("(c) smallest detectable difference (80 % power, α 0.05)")
    for metric, pct_target, ns_target in (("median latency", TARGET_MEDIAN_PCT, TARGET_MEDIAN_US * 1e3),
                                          ("median latency (flow 2 − 1)", TARGET_MEDIAN_PCT, TARGET_MEDIAN_US * 1e3),
                                          ("cost per frame", None, None), ("cost per frame (runs)", None, None),
                                          ("cost per frame (runs, flow 2 − 1)", None, None)):
        es = [e for e in effects if e["metric"] == metric and e["mde_pct"] is not None]
        if not es:
            print(f"    {metric}: none measured")
            continue
        worst_pct, worst_ns = max(e["mde_pct"] for e in es), max(e["mde_ns"] for e in es)
        target = pct_target if pct_target is not None else TARGET_COST_PCT
        met = worst_pct <= target and (ns_target is None or worst_ns <= ns_target)
        ns_txt = f", target ±{ns_target:g} ns" if ns_target is not None else ""
        print(f"    {metric}: ±{min(e['mde_pct'] for e in es):.2f} … ±{worst_pct:.2f} % "
              f"(±{min(e['mde_ns'] for e in es):,.0f} … ±{worst_ns:,.0f} ns); target ±{target:g} %{ns_txt}: "
              + ("met" if met else "NOT met"))


#: The scenarios with a known cost: which family walks the list (its sign: IPv6 − IPv4 rises or falls) and K.
KNOWN = {"acl10-ipv6": (+1, 10), "acl100-ipv6": (+1, 100), "acl10-ipv4": (-1, 10), "acl100-ipv4": (-1, 100)}


def known_costs(effects: list[dict]) -> list[str]:
    """Per metric: each list's effect found (interval beside 0 on the right
    side), not resolved (interval holding 0) or WRONG (beside 0 on the
    wrong side); and whether the 100-rule list costs more than the 10-rule
    one, beside plain forwarding, for each family."""
    out = []
    for metric in ("median latency", "cost per frame", "cost per frame (runs)"):
        e = {x["scenario"]: x for x in effects if x["metric"] == metric}
        words = []
        for name, (sign, _) in KNOWN.items():
            x = e.get(name)
            if x is None or None in x["ci_ns"]:
                words.append(f"{name} not measured")
                continue
            lo, hi = x["ci_ns"]
            side = {sign * lo > 0, sign * hi > 0}
            found = "found" if side == {True} else "WRONG SIGN" if side == {False} and lo * hi > 0 else "not resolved"
            words.append(f"{name} {x['diff_ns']:+.0f} ns {found}")
        grows = []
        for fam in ("ipv6", "ipv4"):
            a, b = e.get(f"acl10-{fam}"), e.get(f"acl100-{fam}")
            ref = e.get("plain")
            if a and b and ref and None not in (a["diff_ns"], b["diff_ns"], ref["diff_ns"]):
                grows.append(f"{fam}: {'grows' if abs(b['diff_ns'] - ref['diff_ns']) > abs(a['diff_ns'] - ref['diff_ns']) else 'DOES NOT GROW'} with K")
        out.append(f"{metric}: " + "; ".join(words) + " (" + ", ".join(grows) + ")")
    for metric in ("median latency (flow 2 − 1)", "cost per frame (runs, flow 2 − 1)"):
        flow = {x["scenario"]: x for x in effects if x["metric"] == metric and x["scenario"] in SCOPED}
        words = []
        for name in SCOPED:
            x = flow.get(name)
            if x is None or None in x["ci_ns"]:
                words.append(f"{name} not measured")
                continue
            lo, hi = x["ci_ns"]
            words.append(f"{name} {x['diff_ns']:+.0f} ns " + ("found" if lo > 0 else "WRONG SIGN" if hi < 0 else "not resolved"))
        a, b = (flow.get(n) for n in SCOPED)
        grows = a and b and None not in (a["diff_ns"], b["diff_ns"]) and b["diff_ns"] > a["diff_ns"]
        out.append(f"IPv6 flow 2 (walks) − flow 1, {metric.split(' (')[0]}: " + "; ".join(words)
                   + (" (grows with K)" if grows else " (DOES NOT GROW with K)"))
    return out


def main() -> int:
    stopping.install()  # Ctrl-C and SIGTERM unwind like the command line's: nothing left behind
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--blocks", type=int, default=10, help="repetition blocks [10]")
    ap.add_argument("--delay-load", default="20kfps", help="the paired delay trials' load, per direction [20kfps]")
    ap.add_argument("--cost-load", default="60kfps", help="the cost-per-frame trials' load, per direction [60kfps]")
    ap.add_argument("--duration", type=float, default=2.0, help="seconds a trial [2]")
    ap.add_argument("--db", default=None, help="results database [a temporary one]")
    ap.add_argument("--resume", action="store_true", help="continue this campaign's unfinished run in --db")
    ap.add_argument("--reread", action="store_true",
                    help="measure nothing: analyse the newest run in --db again (give the options it ran with)")
    args = ap.parse_args()
    if args.reread and not args.db:
        ap.error("--reread needs --db")
    db = Path(args.db) if args.db else Path(tempfile.mkdtemp(prefix="v6bench-sensitivity-")) / "r.db"
    with Store(db) as store:
        if args.reread:
            run_id = store.latest_run_id()
            if run_id is None:
                ap.error(f"{db} holds no run")
        else:
            run_id = runner.run(Site.from_env(), campaign(args.blocks, args.delay_load, args.cost_load, args.duration),
                                 store, args.resume, COMMAND)
        run = report_data.load(store, run_id)
    controls, effects = rows(run, args.delay_load)
    print(f"sensitivity: {args.blocks} blocks, 128 B, delays at {args.delay_load}, costs at {args.cost_load}, "
          f"{args.duration:g}-s trials, topology a, 1G")
    report(controls, effects)
    print(json.dumps({"controls": controls, "effects": effects}))
    if not args.reread:
        bench_log.append("sensitivity", vars(args), {"controls": controls, "effects": effects})
    print(f"(results in {db})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
