"""Traffic through a table just loaded, before any trial on it is measured.

Right after a router has loaded a table of the Internet's size, the first
seconds of traffic through it walk every destination for the first time,
and on this machine the tester's sender then loses its CPU for tens of
milliseconds at a time: measured 2026-11-27 on the internet table, 60
kframes/s of 128 B, three lab builds: 3 or 4 of the first 4 trials
``tester_limited`` (paused 50-450 ms), then 1 of 8 and 0 of 10 once
traffic had crossed the table for about 10 s (docs/methods.md, "A table
in the lab's routers"). A router in service has long forwarded to its
destinations before anyone measures it; so a lab whose routers hold a
table gets up to :data:`WARMUP_S` of traffic to all its destinations
first (in proportion to its routes, 1 s at least: the internet table's
1.23 M take the 10 s), counted but not stored: a measurement of the
warm-up's trials would be of the table's first use, not of its
forwarding.
"""

from __future__ import annotations

from typing import Any

from ..core.rates import line_rate_fps
from ..lab.protocol import Lab
from . import fib_learning
from .request import make_request
from . import execute

#: How long the warm-up sends at most, s (for :data:`WARMUP_ROUTES` routes or more), and at what share of the
#: line rate (5 % of 1G at 128 B: 42 kframes/s).
WARMUP_S = 10.0
WARMUP_ROUTES = 1_230_000
MIN_WARMUP_S = 1.0
WARMUP_LINE_SHARE = 0.05
WARMUP_FRAME_BYTES = 128


def warm_up(lab: Lab) -> tuple[Lab, str | None]:
    """Sends the warm-up through ``lab`` (held locked by the caller) when
    its routers hold a table, after measuring the FIB learning time of a
    DUT told the table over BGP (trial/fib_learning.py); the lab (with that
    time in its table record) and what was done, as a line for the
    progress output, or None without a table."""
    fib = lab.fib
    if not fib:
        return lab, None
    learned = ""
    if fib_learning.pending(lab):
        lab = fib_learning.learn(lab)
        fib = lab.fib or fib
        learned = "; ".join(f"{name} forwards the table's sampled destinations {r['fib_learning_s']:.1f} s after its "
                            f"announcement began (the speaker's sessions up and the whole table exported after {r['load_s']:.1f} s; "
                            f"{r['learning_probes']} probe(s), "
                            f"resolution {r['learning_resolution_s']:.1f} s)" for name, r in fib["routers"].items()) + "\n"
    fps = max(1000, round(WARMUP_LINE_SHARE * line_rate_fps(lab.link_speed_bps, WARMUP_FRAME_BYTES)))
    duration_s = warmup_s(fib)
    r = execute.trial(lab, make_request("50/50", WARMUP_FRAME_BYTES, f"{fps}fps", duration_s, False))
    e = r["engine"]["totals"]
    return lab, learned + (f"warm-up of table {fib['table']}: {duration_s:.1f} s at {fps:,} frames/s to its "
                           f"{fib['destinations']:,} destinations a family, {e['rx_frames']:,} of {e['tx_frames']:,} "
                           "frames forwarded (not stored)")


def warmup_s(fib: dict[str, Any]) -> float:
    """The warm-up's length [s] for a lab's table record (lab/emulated/fib_load.py): in proportion to its routes."""
    routes: int = max(r["ipv4_routes"] + r["ipv6_routes"] for r in fib["routers"].values())
    return round(min(WARMUP_S, max(MIN_WARMUP_S, WARMUP_S * routes / WARMUP_ROUTES)), 1)
