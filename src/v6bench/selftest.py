"""``v6bench selftest``: what the tester itself can do, on the
back-to-back topology (``p2p``: two tester ports joined by one veth, no
DUT), so that no result ever reports the tester's limit as the DUT's.

Per frame size: the tester's capacity, the highest rate it sends and
receives without loss (binary search, 1-s trials, 5 % resolution, IPv4
frames; any loss or ``tester_limited`` trial on p2p is the tester's). Its
latency floor and error bar: five 1-s trials at a low load (10,000
frames/s or a tenth of the capacity, whichever is lower), floor = median
of the trials' median latency, error bar = median of the trials' latency
standard deviation (seed 003 calibrated its capture host so: 6 µs).

The result is stored in the results database; every run records the
latest one, and a trial above 90 % of the capacity at its frame size is
``tester_limited`` (:mod:`v6bench.trial.measurer`).
"""

from __future__ import annotations

import os
import platform
import statistics
import time
from typing import Callable

from . import engine
from .lab import control
from .lab.mtu import Mtus
from .lab.site import Site
from .methods import binary_search
from .rates import line_rate_fps
from .trial.measurer import LabMeasurer
from .trial.request import Mix

LINK_BPS = 10e9  # nominal speed of the p2p link: high enough not to cap the search
RESOLUTION = 0.05
TRIAL_S = 1.0
LOW_LOAD_FPS = 10_000.0
LATENCY_TRIALS = 5


def run(site: Site, frame_sizes: tuple[int, ...], arrangement: str | None, progress: Callable[[str], None]) -> dict:
    started = time.time()
    capacity = {}
    with control.for_trial(site, "p2p", LINK_BPS, Mtus(max(1500, max(frame_sizes) - 18)), arrangement) as lab:
        for size in frame_sizes:
            t = LabMeasurer(site, lab, Mix(100, 0), size, drain_s=0.5)
            r = binary_search.search(t, TRIAL_S, line_rate_fps(LINK_BPS, size), RESOLUTION, max_trials=14)
            low = min(LOW_LOAD_FPS, r.throughput_fps / 10) if r.throughput_fps else LOW_LOAD_FPS / 10
            lats = []
            for _ in range(LATENCY_TRIALS):
                m = t.measure(TRIAL_S, low)
                if not m.tester_limited and m.streams and m.streams[0]["latency_ns"]:
                    lats.append(m.streams[0]["latency_ns"])
            capacity[str(size)] = {
                "capacity_fps": r.throughput_fps or None,
                "capacity_is_link_rate": r.throughput_fps >= line_rate_fps(LINK_BPS, size),
                "lost_or_limited_above_fps": r.failed_fps if r.failed_fps is not None else r.tester_limited_fps,
                "search_trials": len(r.trials),
                "latency_load_fps": low,
                "latency_floor_ns": statistics.median(x["p50"] for x in lats) if lats else None,
                "latency_stddev_ns": statistics.median(x["stddev"] for x in lats) if lats else None,
                "latency_min_ns": min((x["min"] for x in lats), default=None),
                "latency_trials": len(lats),
            }
            c = capacity[str(size)]
            progress(f"  {size} B: capacity {c['capacity_fps'] or 0:,.0f} frames/s, latency floor "
                     f"{(c['latency_floor_ns'] or 0) / 1e3:.1f} µs ± {(c['latency_stddev_ns'] or 0) / 1e3:.1f} µs")
        plan = lab.cpu_plan.to_json()
    return {"kind": "v6bench-selftest", "version": 1, "created_at_unix_s": started, "topology": "p2p",
            "cpu_plan": plan, "trial_duration_s": TRIAL_S, "resolution": RESOLUTION, "mix": "100/0",
            "capacity": capacity, "environment": machine()}


def machine() -> dict:
    model = None
    try:
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), None)
    except OSError:
        pass
    return {"kernel": os.uname().release, "machine": platform.machine(), "cpu_model": model, "cpus": os.cpu_count(),
            "python": platform.python_version(), "engine": engine.version()}
