"""The tester against the router it measures (issue 16), side by side in one run.

For each tester backend (``--backends``; ``V6BENCH_TESTER_BACKEND``,
:mod:`v6bench.trial.packet_io`): a fresh self-test (the tester's capacity on
a back-to-back veth pair, split CPUs) at 64 and 128 B, then ``--searches``
RFC 2544 throughput searches of the emulated router (topology a, 1G,
100/0, binary, 2-s trials) at the same sizes, interleaved. Prints per
backend and frame size the tester's capacity, the router's PDR (searches
the tester capped are lower bounds, counted apart), and their ratio: the
issue's target is tester/router >= 1.5, so that the router, not the tester,
limits a small-frame throughput test. When a search was capped (a trial
the tester limited, by its capacity or by a stall, stood above the first
loss), the router forwards at least that much: the ratio is then only
bounded, by the highest PDR of any search (printed as "<="), and the
uncapped ones alone would flatter the tester.

Run as root: `make bench` or `.venv/bin/python bench/tester_vs_router.py`
(about 6–8 minutes per backend).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

import bench_log
from v6bench import stopping
from v6bench.campaign import runner, spec
from v6bench.lab.model.site import Site
from v6bench.report import data as report_data
from v6bench.store.db import Store
from v6bench.trial import packet_io

SIZES = (64, 128)
TARGET = 1.5


def campaign(name: str, searches: int) -> spec.Campaign:
    d = {"name": name, "lab": {"topology": "a", "link_speed": "1G"},
         "selftest": {"when": "always", "frame_sizes": list(SIZES)},
         "matrix": {"mixes": ["100/0"], "frame_sizes": list(SIZES), "repeat": searches, "drain_s": 0.5},
         "test": [{"kind": "throughput", "search": "binary", "trial_duration_s": 2.0, "resolution": 0.01}]}
    return spec.from_dict(d, json.dumps(d, sort_keys=True), name)


def measure(site: Site, store: Store, which: str, searches: int) -> list[dict]:
    """One backend's rows: per frame size, capacity, PDRs and capped searches."""
    os.environ[packet_io.ENV] = which
    run_id = runner.run(site, campaign(f"tester-vs-router-{which}", searches), store, False, "bench/tester_vs_router.py")
    d = report_data.load(store, run_id)
    _, st = store.latest_selftest()
    rows = []
    for size in SIZES:
        cap = (st["capacity"].get(str(size)) or {}).get("capacity_fps")
        pdrs, capped = [], []
        for t in d.of("throughput"):
            if t.frame_size == size:
                r = t.result.get("pdr") or {}
                (capped if r.get("is_lower_bound") else pdrs).append(r.get("fps") or 0.0)
        rows.append({"backend": which, "used": (st["capacity"].get(str(size)) or {}).get("tester_backend"),
                     "frame_size": size, "capacity_fps": cap, "pdr_fps": pdrs, "capped_pdr_fps": capped})
    return rows


def main() -> int:
    stopping.install()  # Ctrl-C and SIGTERM unwind like the command line's: nothing left behind
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backends", default="af_packet,af_xdp,xdp_live", help="comma-separated, of " + ", ".join(packet_io.BACKENDS))
    ap.add_argument("--searches", type=int, default=3, help="throughput searches per frame size and backend [3]")
    ap.add_argument("--db", default=None, help="results database [a temporary one]")
    args = ap.parse_args()
    site = Site.from_env()
    db = Path(args.db) if args.db else Path(tempfile.mkdtemp(prefix="v6bench-tvr-")) / "r.db"
    rows = []
    with Store(db) as store:
        for which in args.backends.split(","):
            if which not in packet_io.BACKENDS:
                ap.error(f"--backends: {which!r} is not one of {', '.join(packet_io.BACKENDS)}")
            rows += measure(site, store, which, args.searches)
    print(f"{'backend':<10} {'ran':<16} {'size':>5} {'tester capacity':>16} {'router PDR':>22} {'capped':>7} "
          f"{'tester/router':>14}  target >= {TARGET}")
    for r in rows:
        cap, pdrs, capped = r["capacity_fps"], r["pdr_fps"], r["capped_pdr_fps"]
        if pdrs and not capped:
            pdr = statistics.median(pdrs)
            pdr_txt = f"{pdr:,.0f} fps (n={len(pdrs)})"
            ratio = cap / pdr if cap else None
            ratio_txt = f"{ratio:.2f}" if ratio else "-"
            verdict = "met" if ratio and ratio >= TARGET else "NOT met"
        elif capped:
            # A capped search says the router forwards at least that much: the
            # ratio is at most capacity over the highest PDR seen, capped or not.
            low = max(capped + pdrs)
            pdr_txt = f">= {low:,.0f} fps ({len(pdrs)} uncapped)"
            ratio_txt = f"<= {cap / low:.2f}" if cap and low else "-"
            verdict = ("NOT met" if cap and cap / low < TARGET else "unknown") + " (the tester capped a search)"
        else:
            pdr_txt, ratio_txt, verdict = "-", "-", "no search"
        print(f"{r['backend']:<10} {r['used'] or '-':<16} {r['frame_size']:>4}B {(cap or 0):>12,.0f} fps {pdr_txt:>22} "
              f"{len(capped):>7} {ratio_txt:>14}  {verdict}", flush=True)
    print(json.dumps(rows))
    bench_log.append("tester_vs_router", vars(args), rows)
    print(f"(results in {db})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
