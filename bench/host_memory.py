"""How steady this machine's memory is: the floor under a router's capacity.

A software router's forwarding rate is set by its CPU and by the caches
and memory behind it. On a virtual machine the last-level cache and the
memory are shared with other tenants of the host, whose load the guest
neither sees nor controls; when it changes, the router's capacity
changes with it, and so does every throughput search, whatever its
method (bench/repeatability.py's "capacity drift" row).

This bench measures that without a lab. Pinned to one CPU (``--cpu``,
the last one by default: the router's in the ``split`` arrangement), its
timing loop (``bench/host_memory.c``, built with ``cc`` on each run)
times, every ``--interval-ms``, one fixed amount of work per working set
in turn: ``--reads`` random 8-byte reads (seeded addresses) from an array
of 32 KiB (the L1 cache: the CPU's own speed, the control), 256 KiB (L2),
4 MiB and 32 MiB (the last-level cache shared with the host's other
tenants, and memory). It prints per working set the median time a read
(ns), the CV of single samples and the CV of the medians of
``--window-s`` windows: the drift a search of that length meets. A
working set whose window CV is larger than the control's is slowed by
someone else from time to time.

Run as root or not: ``.venv/bin/python bench/host_memory.py`` (about 2
minutes; run it with nothing else on the machine).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import bench_log

#: The working sets timed, in bytes, smallest first; the first is the control.
WORKING_SETS_B = (32 << 10, 256 << 10, 4 << 20, 32 << 20)
SOURCE = Path(__file__).resolve().with_suffix(".c")


def cv_pct(xs: list[float]) -> float:
    return 100 * statistics.stdev(xs) / statistics.fmean(xs)


def window_medians(samples: list[tuple[float, float]], window_s: float) -> list[float]:
    """Medians of the sample values (second of each pair) in consecutive
    windows of ``window_s`` from the first sample's time (the first of each
    pair); a last, partial window is dropped."""
    if not samples:
        return []
    t0, out, cur, edge = samples[0][0], [], [], window_s
    for t, v in samples:
        if t - t0 >= edge:
            out.append(statistics.median(cur))
            cur, edge = [], edge + window_s
        cur.append(v)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cpu", type=int, default=max(os.sched_getaffinity(0)), help="CPU to run on [the last]")
    ap.add_argument("--duration-s", type=float, default=120.0, help="how long to measure [120]")
    ap.add_argument("--window-s", type=float, default=10.0, help="window whose medians are compared [10]")
    ap.add_argument("--interval-ms", type=float, default=100.0, help="pause between rounds [100]")
    ap.add_argument("--reads", type=int, default=200_000, help="random reads a sample [200000]")
    args = ap.parse_args()
    if not 0 < args.window_s * 2 <= args.duration_s <= 3600:
        ap.error("--duration-s must be 2 windows or more, and at most 3600")
    os.sched_setaffinity(0, {args.cpu})   # the timing loop inherits it
    samples: dict[int, list[tuple[float, float]]] = {size: [] for size in WORKING_SETS_B}
    with tempfile.TemporaryDirectory(prefix="v6bench-host-memory-") as tmp:
        exe = Path(tmp) / "host_memory"
        subprocess.run(["cc", "-O2", "-o", str(exe), str(SOURCE)], check=True, timeout=60)
        out = subprocess.run([str(exe), str(args.duration_s), str(args.interval_ms), str(args.reads),
                              *map(str, WORKING_SETS_B)], capture_output=True, text=True, check=True,
                             timeout=args.duration_s + 60).stdout
    for line in out.splitlines():
        t, size, ns = line.split()
        samples[int(size)].append((float(t), float(ns)))
    rows = []
    print(f"CPU {args.cpu}, {args.duration_s:g} s, windows of {args.window_s:g} s")
    print(f"{'working set':>12} {'samples':>8} {'ns a read':>10} {'sample CV':>10} {'window CV':>10}  window medians (ns)")
    for size in WORKING_SETS_B:
        vs = [v for _, v in samples[size]]
        wins = window_medians(samples[size], args.window_s)
        row = {"working_set_b": size, "samples": len(vs), "median_ns": statistics.median(vs),
               "sample_cv_pct": cv_pct(vs), "window_cv_pct": cv_pct(wins) if len(wins) > 1 else None,
               "window_medians_ns": wins}
        rows.append(row)
        label = f"{size >> 10} KiB" if size < 1 << 20 else f"{size >> 20} MiB"
        win_cv = f"{row['window_cv_pct']:.1f} %" if row["window_cv_pct"] is not None else "-"
        print(f"{label:>12} {len(vs):>8} {row['median_ns']:>10.2f} {row['sample_cv_pct']:>8.1f} % {win_cv:>10}  "
              + " ".join(f"{w:.2f}" for w in wins), flush=True)
    bench_log.append("host_memory", vars(args), rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
