"""Writes one simulated campaign run into a store, as a tester machine
would (the store tests start it as a separate process, kill it, or run two
at once): ``python store_writer.py LOCATION NAME [--resume RUN] [--pause-s S]``.
Prints ``run N`` when the run starts and ``finished N`` at its end."""

from __future__ import annotations

import argparse
import sys
import time

from v6bench.campaign import runner, spec
from v6bench.methods.simulated import SimulatedTester
from v6bench.store.db import Store

CAMPAIGN = """
name = "{name}"
[lab]
topology = "a"
link_speed = "100M"
[matrix]
mixes = ["100/0", "0/100"]
frame_sizes = [128, 512, 1518]
repeat = 2
[[test]]
kind = "throughput"
trial_duration_s = 1.0
resolution = 0.01
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("location")
    ap.add_argument("name")
    ap.add_argument("--resume", type=int, default=None)
    ap.add_argument("--pause-s", type=float, default=0.0, help="pause after each trial (to be killed mid-run)")
    a = ap.parse_args()
    c = spec.parse_campaign(CAMPAIGN.format(name=a.name), f"{a.name}.toml")
    with Store(a.location) as store:
        rid = a.resume if a.resume is not None else store.start_run(c.name, "store_writer", {"kernel": "sim"}, None,
                                                                     c.path, c.sha256, c.text)
        if a.resume is not None:
            store.resume_run(rid, {"kernel": "sim"}, None)
        print(f"run {rid}", flush=True)

        def make(p):
            t = SimulatedTester(50_000, line_fps=84_459.0, seed=p.repetition)
            measure = t.measure

            def slow(duration_s, load_fps):
                m = measure(duration_s, load_fps)
                time.sleep(a.pause_s)
                return m
            t.measure = slow
            return t

        runner.run_points(c, store, rid, make, lambda s: None)
        store.finish_run(rid, "finished")
        print(f"finished {rid}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
