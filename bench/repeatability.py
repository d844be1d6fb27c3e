"""Repeatability of throughput and latency on the emulated lab (issue 15).

Runs, per CPU arrangement and search, a campaign of ``--searches``
throughput searches per family (100/0 and 0/100) at 128 B on topology a,
1G, with one latency trial at 10 % of line rate per family and block, all
in randomized interleaved blocks (as every v6bench run), and prints per
family, arrangement and search the coefficient of variation (CV = sample
standard deviation / mean) of the NDR, the PDR and the per-trial median
latency, with the targets on this 2-vCPU machine: PDR CV <= 5 %, NDR CV
<= 5 % (issue 63; 10 % before). Searches the tester capped (lower bounds) are counted and left
out, as in reports. Two rows per family give the floor under those CVs
(:func:`capacity_rows`): how much the router's own forwarding rate
varies from trial to trial ("router capacity") and from one search to
the next ("capacity drift").

The router configurations (``--duts``, :data:`DUTS`, all three by
default): ``acl25both`` makes the router's own forwarding the bottleneck:
seed 000's 25-rule access lists on its input and its output port, 50
rules a frame, bring its 128-B capacity to about 150-180 kframes/s, well
within the tester's reach: this is the DUT the targets are checked on
(bench/log/performance-2026-11.md, runs N and N2). ``limit50k``, the same router
without lists, policed by lab/model/dut.py (``limit_fps``) to 50,000 frames/s:
a DUT of known, fixed capacity, whose spread is what the tester, the
search and the lab add. ``default``, the emulated router as every
topology-a test has it: on two vCPUs it forwards 128-B frames faster
than the tester can offer them (runs H, I, L), so its searches end at
the tester's limit and its CVs cannot be measured here; it is run to
show that, and to measure them on a machine where they can be.

The searches (``--search``, :data:`SEARCHES`): ``binary``, RFC 2544
bisection with 2-s trials, where one trial decides a load; ``confirm``
(the default), the same bisection where a load that lost frames is
tried twice more and fails only if all three trials lose
(``confirm_losses = 2``): on the EPYC of 2026-11-29 one trial a load
gave an IPv4 NDR CV of 26.5 %, a search sent to 78 kframes/s by a few
hundred frames lost at loads far below the router's capacity;
``mlr``, MLRsearch with CSIT's kind of goals: 1-s trials, a load decided
by 10 s of them, failing only when more than half of that time lost
frames (about an hour a router configuration; run M: no better here).

Run as root: `make bench` or `.venv/bin/python bench/repeatability.py`
(with the defaults and the AF_XDP tester, measured 2026-11-24/25: about
15 minutes for acl25both, 10 for each of the others). A bench cut short (Ctrl-C, a lost
session) goes on where it stopped with the same options, ``--db`` and
``--resume``: each campaign's unfinished run in that database is resumed
(campaign/runner.py), a finished one is read again, a missing one run.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

import bench_log
from v6bench import stopping
from v6bench.campaign import runner, spec
from v6bench.lab.model.site import Site
from v6bench.report import data as report_data
from v6bench.report import family_pairs
from v6bench.store.db import Store

TARGETS_PCT = {"PDR": 5.0, "NDR": 5.0}
COMMAND = "bench/repeatability.py"


#: The throughput searches compared: [test] keys of a campaign.
SEARCHES = {
    "binary": {"search": "binary", "trial_duration_s": 2.0},
    "confirm": {"search": "binary", "trial_duration_s": 2.0, "confirm_losses": 2},
    "mlr": {"search": "mlr", "trial_duration_s": 1.0, "duration_sum_s": 10.0},
}


#: The router configurations: a campaign's ``[dut]`` table (lab/model/dut.py).
DUTS = {
    "acl25both": {"acl": 25, "acl_at": "both"},
    "limit50k": {"limit_fps": 50_000},
    "default": {},
}


def campaign(arrangement: str, searches: int, search: str, dut: str = "default") -> spec.Campaign:
    tp = {"kind": "throughput", "resolution": 0.01, **SEARCHES[search]}
    trial_s = SEARCHES[search]["trial_duration_s"]
    d = {"name": f"repeatability-{arrangement}-{dut}-{search}",
         "lab": {"topology": "a", "link_speed": "1G", "cpu_arrangement": arrangement},
         "dut": DUTS[dut],
         "selftest": {"when": "if-stale", "frame_sizes": [128]},
         "matrix": {"mixes": ["100/0", "0/100"], "frame_sizes": [128], "repeat": searches, "drain_s": 0.5},
         "test": [tp,
                  {"kind": "latency", "loads": ["10%"], "trial_duration_s": trial_s, "repeat": 1}]}
    return spec.from_dict(d, json.dumps(d, sort_keys=True), "repeatability")


def run_campaign(site: Site, c: spec.Campaign, store: Store, resume: bool) -> int:
    """Runs ``c`` and returns its run id; with ``resume``, finishes its
    unfinished run in ``store`` instead, or returns its finished one."""
    if resume:
        if store.resumable_run(c.sha256) is not None:
            return runner.run(site, c, store, True, COMMAND)
        finished = store.finished_run(c.sha256)
        if finished is not None:
            print(f"run {finished}: {c.name} finished in {store.path}: read again, not rerun", file=sys.stderr)
            return finished
    return runner.run(site, c, store, False, COMMAND)


def cv(xs: list[float]) -> str:
    if len(xs) < 2 or not statistics.fmean(xs):
        return "-"
    return f"{100 * statistics.stdev(xs) / statistics.fmean(xs):.1f} %"


def measured_rows(label: str, d) -> list[tuple]:
    """One row per family and metric of a run: n, left out, mean, min, max, CV, target, verdict."""
    values: dict[tuple[str, str], list[float]] = {}
    left_out: dict[tuple[str, str], int] = {}
    for p in family_pairs.families(d):
        metric = p.metric.split(" [")[0].replace("throughput ", "")
        if p.point.startswith("128 B") and metric in ("NDR", "PDR", "median latency"):
            for fam in ("IPv4", "IPv6"):
                values[(metric, fam)] = p.values.get(fam, [])
                left_out[(metric, fam)] = p.excluded_by.get(fam, 0)
    rows = []
    for (metric, fam), xs in sorted(values.items()):
        target = TARGETS_PCT.get(metric)
        if not xs:
            rows.append((label, fam, metric, 0, left_out[(metric, fam)], None, None, None, "-",
                         f"<= {target:g} %" if target else "", "not measurable: every search capped by the tester"))
            continue
        c_pct = 100 * statistics.stdev(xs) / statistics.fmean(xs) if len(xs) > 1 and statistics.fmean(xs) else None
        met = "-" if target is None or c_pct is None else ("met" if c_pct <= target else "NOT met")
        rows.append((label, fam, metric, len(xs), left_out.get((metric, fam), 0), statistics.fmean(xs),
                     min(xs), max(xs), cv(xs), f"<= {target:g} %" if target else "", met))
    return rows


#: A throughput trial counts towards the router's capacity when its
#: forwarding threads were at least this busy (near saturation).
SATURATED_BUSY = 0.93
FAMILY_OF_MIX = {"100/0": "IPv4", "0/100": "IPv6"}


def capacity_rows(label: str, store: Store, run_id: int) -> list[tuple]:
    """The router's own speed, the floor under any search's CV, two rows a
    family. For every throughput trial the tester kept up with and the
    router's threads were at least :data:`SATURATED_BUSY` busy, the frames
    it forwarded per second of its busy time (``rx_frames / duration_s /
    busy_ratio``, the rate it would forward at 100 % busy).

    ``router capacity``: their CV over all trials. A router whose rate
    varies this much from trial to trial gives a zero-loss NDR that varies
    at least as much when one trial decides a load.

    ``capacity drift``: how much the router's rate moved from one search
    to the next, which no search, however many trials it spends on a load,
    can average away: :func:`drift_cv_pct` of the per-search rates."""
    caps: dict[str, dict[int, list[float]]] = {}
    for test in store.tests(run_id):
        fam = FAMILY_OF_MIX.get(test["mix"])
        if test["kind"] != "throughput" or fam is None:
            continue
        for trial in store.trials(test["id"]):
            routers = ((trial["result"] or {}).get("dut") or {}).get("routers") or []
            busy = routers[0].get("busy_ratio") if len(routers) == 1 else None
            if trial["tester_limited"] or not busy or busy < SATURATED_BUSY or not trial["duration_s"]:
                continue
            caps.setdefault(fam, {}).setdefault(test["id"], []).append(trial["rx_frames"] / trial["duration_s"] / busy)
    rows = []
    for fam, by_search in sorted(caps.items()):
        xs = [x for v in by_search.values() for x in v]
        rows.append((label, fam, "router capacity", len(xs), 0, statistics.fmean(xs), min(xs), max(xs), cv(xs), "",
                     "floor, one trial a load"))
        searches = [v for v in by_search.values() if len(v) >= 2]
        if len(searches) >= 2:
            means = [statistics.fmean(v) for v in searches]
            rows.append((label, fam, "capacity drift", len(searches), 0, statistics.fmean(means), min(means),
                         max(means), f"{drift_cv_pct(searches):.1f} %", "", "floor, any search"))
    return rows


def drift_cv_pct(searches: list[list[float]]) -> float:
    """The between-search coefficient of variation of the router's rate,
    in %: the one-way random-effects estimate (method of moments) of the
    standard deviation of the searches' true means, that is the variance
    of the searches' means less the mean sampling variance of one
    (``s_i**2 / n_i``), floored at 0, over the grand mean. Needs two
    searches of two trials or more."""
    means = [statistics.fmean(v) for v in searches]
    sampling = statistics.fmean([statistics.variance(v) / len(v) for v in searches])
    return 100 * max(statistics.variance(means) - sampling, 0.0) ** 0.5 / statistics.fmean(means)


def main() -> int:
    stopping.install()  # Ctrl-C and SIGTERM unwind like the command line's: nothing left behind
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--arrangements", default="split", help="comma-separated CPU arrangements [split]")
    ap.add_argument("--searches", type=int, default=5, help="searches per family and arrangement [5]")
    ap.add_argument("--search", default="confirm", help=f"comma-separated, of {', '.join(SEARCHES)} [confirm]")
    ap.add_argument("--duts", default="acl25both,limit50k,default",
                    help=f"comma-separated router configurations, of {', '.join(DUTS)} [acl25both,limit50k,default]")
    ap.add_argument("--db", default=None, help="results database [a temporary one]")
    ap.add_argument("--resume", action="store_true",
                    help="with --db: resume each campaign's unfinished run there, read a finished one, run the rest")
    args = ap.parse_args()
    if args.resume and not args.db:
        ap.error("--resume needs --db: the database of the run to go on with")
    for option, values, known in (("--search", args.search, SEARCHES), ("--duts", args.duts, DUTS)):
        for v in values.split(","):
            if v not in known:
                ap.error(f"{option}: {v!r} is not one of {', '.join(known)}")
    site = Site.from_env()
    db = Path(args.db) if args.db else Path(tempfile.mkdtemp(prefix="v6bench-repeat-")) / "r.db"
    rows: list[tuple] = []
    with Store(db) as store:
        for arrangement in args.arrangements.split(","):
            for dut in args.duts.split(","):
                for search in args.search.split(","):
                    run_id = run_campaign(site, campaign(arrangement, args.searches, search, dut), store, args.resume)
                    label = f"{arrangement}/{dut}/{search}"
                    rows += measured_rows(label, report_data.load(store, run_id)) + capacity_rows(label, store, run_id)
    print(f"{'arrangement':<22} {'family':<6} {'metric':<15} {'n':>3} {'capped':>6} {'mean':>12} {'min':>12} {'max':>12} "
          f"{'CV':>8} {'target':>8}  verdict")
    for a, fam, metric, n, capped, mean, lo, hi, c_txt, target, met in rows:
        unit = "µs" if metric == "median latency" else "fps"
        if mean is None:
            print(f"{a:<22} {fam:<6} {metric:<15} {n:>3} {capped:>6} {'-':>12} {'-':>12} {'-':>12} {c_txt:>8} {target:>8}  {met}")
            continue
        print(f"{a:<22} {fam:<6} {metric:<15} {n:>3} {capped:>6} {mean:>9,.1f} {unit:<2} {lo:>9,.1f} {unit:<2} "
              f"{hi:>9,.1f} {unit:<2} {c_txt:>8} {target:>8}  {met}", flush=True)
    keys = ("arrangement", "family", "metric", "n", "capped", "mean", "min", "max", "cv", "target", "verdict")
    bench_log.append("repeatability", vars(args), [dict(zip(keys, r)) for r in rows])
    print(f"(results in {db})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
