#!/usr/bin/env python3
"""The engine's sending rate with one sender a port against several
(``tx_queues``, docs/engine-spec.md "Several senders a port"), in one run.

The veth pair of bench/engine_vs_trafgen.py (namespaces v6bb-a and
v6bb-b, its plain arrangement), made with as many
transmit and receive queues as senders (``--queues``, default: the CPUs
this process may use, at most 4). The engine sends 64-byte IPv4/UDP frames
by AF_XDP from A and receives and counts them on B, first with one sender
pinned to the first CPU, then with one sender a queue, each pinned to a
CPU of its own, in alternating rounds. Each run offers far more than the
engine can send (``--offer``), so the achieved rate is the engine's
maximum; on plain veth the receive work of each frame runs on its
sender's CPU, as the receiving queue's softirq.

Prints, as medians over ``--rounds``: the achieved rate and lost frames of
each, and the ratio several/one. Nothing here is the DUT's: the numbers
say how the tester's sending scales with cores.

Run as root. Creates the namespaces and removes them on exit, Ctrl-C
included.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys

import bench_log
from engine_vs_trafgen import build, destroy, spec  # the veth pair A–B and the engine's spec for it
from v6bench import engine, stopping


def run(cpus: list[int], offer_fps: float, duration_s: float) -> dict:
    """One trial with one sender a CPU in ``cpus``: achieved rate, lost frames."""
    sp = spec(offer_fps, duration_s, "af_xdp")
    del sp["rx_cpu"]  # the receive thread wherever the kernel puts it: every CPU sends here
    sp["ports"][0].update(tx_queues=len(cpus), tx_cpu=cpus if len(cpus) > 1 else cpus[0])
    r = engine.run_trial(sp)
    s = r["streams"][0]
    return {"offered_fps": r["ports"][0]["tx"]["offered_fps"], "lost": s["lost_frames"], "reordered": s["reordered_frames"],
            "ring_drops": r["ports"][1]["rx_ring_drops"]}


def main() -> int:
    stopping.install()
    cpus = sorted(os.sched_getaffinity(0))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queues", type=int, default=min(len(cpus), 4), help="senders of the second arrangement [CPUs, at most 4]")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--duration", type=float, default=2.0, help="seconds per run")
    ap.add_argument("--offer", type=float, default=20e6, help="frames/s offered, above what the engine can send")
    args = ap.parse_args()
    if not 2 <= args.queues <= len(cpus):
        raise SystemExit(f"--queues: 2..{len(cpus)} (one CPU a sender), got {args.queues}")
    destroy()  # a run cut short before
    try:
        build(napi=False, queues=args.queues)
        rows: dict[int, list[dict]] = {1: [], args.queues: []}
        for i in range(args.rounds):
            for n in ((1, args.queues) if i % 2 == 0 else (args.queues, 1)):
                rows[n].append(run(cpus[:n], args.offer, args.duration))
                print(f"round {i + 1}, {n} sender(s): {rows[n][-1]}", flush=True)
    finally:
        destroy()
    med = {n: statistics.median(r["offered_fps"] for r in rs) for n, rs in rows.items()}
    print(f"\n64-B IPv4/UDP, af_xdp, veth with {args.queues} queues, medians of {args.rounds} runs of {args.duration} s:")
    for n, rs in rows.items():
        print(f"  {n} sender(s) on CPU {', '.join(map(str, cpus[:n]))}: {med[n]:>12,.0f} frames/s"
              f"  lost {[r['lost'] for r in rs]}  reordered {[r['reordered'] for r in rs]}  receive drops {[r['ring_drops'] for r in rs]}")
    print(f"  ratio {args.queues} senders / 1: {med[args.queues] / med[1]:.2f}")
    bench_log.append("sender_queues", vars(args), {"runs": {str(n): rs for n, rs in rows.items()},
                                                   "median_offered_fps": {str(n): m for n, m in med.items()},
                                                   "ratio": med[args.queues] / med[1]})
    return 0


if __name__ == "__main__":
    sys.exit(main())
