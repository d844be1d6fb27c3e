"""The lab's CPU arrangements compared on this machine (docs/architecture.md).

For each arrangement (split, inline) on topology a: trials of 128-byte
frames, 50/50 mix, at a few rates; prints offered rate, loss, latency
percentiles, the routers' CPU and whether the trial was tester_limited.
Run as root: `make bench` or `.venv/bin/python bench/lab_arrangements.py`.
"""

from __future__ import annotations

import argparse
import sys

import bench_log
from v6bench import stopping
from v6bench.lab.emulated import control
from v6bench.lab.model.site import Site
from v6bench.trial import execute
from v6bench.trial.request import make_request


def main() -> int:
    stopping.install()  # Ctrl-C and SIGTERM unwind like the command line's: nothing left behind
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rates", default="10kfps,50kfps,100kfps,200kfps")
    ap.add_argument("--duration", type=float, default=5.0)
    ap.add_argument("--topology", default="a")
    args = ap.parse_args()
    site = Site.from_env()
    print(f"{'arrangement':<11} {'rate':>8} {'offered':>9} {'lost':>7} {'loss %':>7} {'p50 µs':>7} {'p99 µs':>8} "
          f"{'max µs':>8} {'DUT CPU':>8}  tester_limited")
    rows = []
    for arrangement in ("split", "inline"):
        with control.for_trial(site, args.topology, None, None, arrangement) as lab:
            for rate in args.rates.split(","):
                r = execute.trial(lab, make_request("50/50", 128, rate, args.duration, False), site.engine_pid_file)
                # IPv4's stream, wherever the trial's drawn order put it (trial/spec.py)
                lat = next(s for s in r["streams"] if s["ip_version"] == 4)["latency_ns"] or {}
                cpu = [x["busy_ratio"] for x in r["dut"]["routers"] if x["busy_ratio"] is not None]
                print(f"{arrangement:<11} {rate:>8} {r['offered_fps']:>9,.0f} {r['lost_frames']:>7,} "
                      f"{r['loss_ratio'] * 100:>7.3f} {lat.get('p50', 0) / 1e3:>7.1f} {lat.get('p99', 0) / 1e3:>8.1f} "
                      f"{lat.get('max', 0) / 1e3:>8.1f} {(f'{sum(cpu):.0%}' if cpu else '-'):>8}  "
                      f"{'yes: ' + r['tester_limited_reasons'][0][:60] if r['tester_limited'] else 'no'}", flush=True)
                rows.append({"arrangement": arrangement, "rate": rate, "offered_fps": r["offered_fps"],
                             "lost_frames": r["lost_frames"], "loss_ratio": r["loss_ratio"], "ipv4_latency_ns": lat,
                             "dut_busy_ratio": sum(cpu) if cpu else None, "tester_limited": r["tester_limited"],
                             "tester_limited_reasons": r["tester_limited_reasons"]})
    bench_log.append("lab_arrangements", vars(args), rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
