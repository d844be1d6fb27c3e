"""What the faster throughput searches cost and find, against RFC 2544's
60-s bisection, on a DUT of known capacity (issue 63).

One run, in file order, IPv4 (100/0), topology a, 1G links, the router
policed to ``--limit`` frames/s per direction (``limit_fps``,
lab/model/dut.py: a DUT of known, fixed capacity):

1. ``rfc2544``: bisection from the line rate with 60-s trials, 128 B;
2. ``mlr``: MLRsearch (RFC 9971), 1-s trials then 60-s final ones,
   128 B;
3. ``neighbour``: bisection with 60-s trials at 256 B started from the
   nearest frame size measured before it (128 B, ``start =
   "neighbour"``): a campaign's next frame size, whose policed capacity
   is the same in frames/s.

It prints each search's NDR and PDR, its trials, its wall time, and the
NDR's and the wall time's ratios to the 60-s bisection's, with the
target: NDR within 1 % of the 60-s search's, in less time. With the
defaults it takes about 25 minutes.

Run as root: ``.venv/bin/python bench/search_cost.py`` (``--db`` and
``--resume`` as bench/repeatability.py).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import bench_log
from repeatability import run_campaign
from v6bench import stopping
from v6bench.campaign import spec
from v6bench.lab.model.site import Site
from v6bench.store.db import Store

COMMAND = "bench/search_cost.py"
#: The searches, in the order they run: (label, frame size [B], the [[test]] table's keys).
SEARCHES = (
    ("rfc2544", 128, {"search": "binary", "trial_duration_s": 60.0}),
    ("mlr", 128, {"search": "mlr", "trial_duration_s": 60.0, "initial_trial_duration_s": 1.0}),
    ("neighbour", 256, {"search": "binary", "trial_duration_s": 60.0, "start": "neighbour"}),
)
NDR_WITHIN = 0.01


def campaign(limit_fps: int) -> spec.Campaign:
    d = {"name": f"search-cost-{limit_fps}",
         "lab": {"topology": "a", "link_speed": "1G", "cpu_arrangement": "split"},
         "dut": {"limit_fps": limit_fps},
         "selftest": {"when": "if-stale", "frame_sizes": [128, 256]},
         "design": {"order": "file"},
         "matrix": {"mixes": ["100/0"], "repeat": 1, "drain_s": 0.5},
         "test": [{"kind": "throughput", "resolution": 0.01, "frame_sizes": [size], **keys}
                  for _, size, keys in SEARCHES]}
    return spec.from_dict(d, json.dumps(d, sort_keys=True), "search-cost")


def rows(store: Store, run_id: int) -> list[dict]:
    """One row per search, in the order of :data:`SEARCHES`."""
    tests = [t for t in store.tests(run_id) if t["status"] == "done"]
    out = []
    for (label, size, _), t in zip(SEARCHES, tests):
        r = t["result"]
        out.append({"search": label, "frame_size": size, "ndr_fps": r["ndr_fps"], "pdr_fps": r["pdr_fps"],
                    "ndr_is_lower_bound": r["ndr"]["is_lower_bound"], "trials": len(store.trials(t["id"])),
                    "wall_s": t["finished_at_unix_s"] - t["started_at_unix_s"],
                    "started_from": r.get("started_from", "the line rate" if r["search"] == "binary" else "MLRsearch's own")})
    return out


def main() -> int:
    stopping.install()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--limit", type=int, default=50_000, help="the router's policed capacity [frames/s] [50000]")
    ap.add_argument("--db", default=None, help="results database [a temporary one]")
    ap.add_argument("--resume", action="store_true", help="with --db: resume the unfinished run there")
    args = ap.parse_args()
    if args.resume and not args.db:
        ap.error("--resume needs --db: the database of the run to go on with")
    db = Path(args.db) if args.db else Path(tempfile.mkdtemp(prefix="v6bench-search-cost-")) / "s.db"
    with Store(db) as store:
        run_id = run_campaign(Site.from_env(), campaign(args.limit), store, args.resume)
        found = rows(store, run_id)
    if len(found) < len(SEARCHES):
        print(f"only {len(found)} of {len(SEARCHES)} searches finished (results in {db})", file=sys.stderr)
        return 1
    ref = found[0]
    print(f"{'search':<10} {'size':>5} {'NDR':>12} {'PDR':>12} {'trials':>6} {'wall':>8} {'NDR / 60-s':>10} "
          f"{'time / 60-s':>11}  verdict; started from")
    for r in found:
        r["ndr_ratio"] = r["ndr_fps"] / ref["ndr_fps"] if ref["ndr_fps"] else None
        r["time_ratio"] = r["wall_s"] / ref["wall_s"]
        met = (r is ref or r["ndr_ratio"] is not None and abs(r["ndr_ratio"] - 1) <= NDR_WITHIN and r["time_ratio"] < 1
               and not r["ndr_is_lower_bound"])
        r["verdict"] = "reference" if r is ref else "met" if met else "NOT met"
        ratio = f"{r['ndr_ratio']:.4f}" if r["ndr_ratio"] is not None else "-"
        print(f"{r['search']:<10} {r['frame_size']:>3} B {r['ndr_fps']:>8,.0f} fps {r['pdr_fps']:>8,.0f} fps "
              f"{r['trials']:>6} {r['wall_s']:>6.0f} s {ratio:>10} {r['time_ratio']:>11.2f}  {r['verdict']}; "
              f"{r['started_from']}", flush=True)
    bench_log.append("search_cost", vars(args), found)
    print(f"(target: NDR within {NDR_WITHIN:.0%} of the 60-s bisection's, in less time; results in {db})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
