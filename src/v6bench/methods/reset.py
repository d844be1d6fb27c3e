"""Reset (RFC 2544 §26.6): a constant stream at the throughput rate, the
DUT reset during it, and the reset time = the gap between the last frame
before the reset and the first after it, per IP version: the largest gap
between received frames of the stream (``inter_arrival_ns.max``), as seed
000 read it from a capture. The loss over the trial divided by the rate is
reported beside it as a cross-check. A family still losing frames when the
traffic ended (its last lost frame among the stream's last two) did not
come back within the trial: it has no gap to measure, so its reset time
is unknown (None, ``recovered: false``), at least ``reset_time_at_least_s``
(from its first lost frame to the end of the traffic); use a longer trial.

Kinds on the emulated DUT (``lab/emulated/reset.py``): ``soft`` takes the router's
interfaces down and up and restores its addresses and routes; ``hard``
tears its network namespace down and builds it again (interfaces,
sysctls, addresses, routes, DUT configuration), with the cables (veth
ends) kept.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from ..core.tester import RESET_KINDS as KINDS, Tester
from ..core.params import check



@dataclass(frozen=True)
class Params:
    kinds: tuple[str, ...] = KINDS
    trial_duration_s: float = 10.0
    reset_at_s: float = 2.0
    repeat: int = 1
    load_pct_of_throughput: float = 100.0

    def __post_init__(self) -> None:
        for k in self.kinds:
            check(k in KINDS, "kinds", f"{k!r} is not one of {', '.join(KINDS)}")
        check(0 < self.reset_at_s < self.trial_duration_s, "reset_at_s", "must fall inside the trial")
        check(self.trial_duration_s <= 3600, "trial_duration_s", "is above 3600 s")
        check(1 <= self.repeat <= 1000, "repeat", "is outside 1..1000")
        check(0 < self.load_pct_of_throughput <= 100, "load_pct_of_throughput", "is outside (0, 100]")


def _family(streams: list[dict], fps: float, duration_s: float) -> dict:
    """One IP version's reset time, loss and loss time (module docstring);
    ``fps``: its share of the load, where a stream does not say."""
    gaps = [s["inter_arrival_ns"]["max"] for s in streams if s.get("inter_arrival_ns")]
    lost = sum(s["lost_frames"] for s in streams)
    share = sum(s.get("intended_fps", fps) for s in streams) or fps
    out = {"reset_time_s": max(gaps) / 1e9 if gaps else None, "lost_frames": lost,
           "loss_time_s": lost / share if share else None}
    unrecovered = [w for s in streams if (w := s.get("loss_window"))
                   and w["last_due_s"] >= duration_s - 2 / max(s.get("intended_fps", fps), 1e-9)]
    if unrecovered:
        out.update(reset_time_s=None, recovered=False,
                   reset_time_at_least_s=round(duration_s - min(w["first_due_s"] for w in unrecovered), 6))
    return out


def run(tester: Tester, p: Params, throughput_fps: float) -> dict:
    load = throughput_fps * p.load_pct_of_throughput / 100
    out = {"load_fps": load, "kinds": {}}
    for kind in p.kinds:
        reps = []
        for _ in range(p.repeat):
            m = tester.reset(p.trial_duration_s, load, p.reset_at_s, kind)
            fams = {str(v): _family(ss, load / len(m.families()), p.trial_duration_s) for v, ss in m.families().items()}
            reps.append({"tester_limited": m.tester_limited, **m.extra, "families": fams})
        valid = [r for r in reps if not r["tester_limited"]]
        summary = {}
        for v in sorted({v for r in valid for v in r["families"]}):
            xs = [r["families"][v]["reset_time_s"] for r in valid if r["families"][v]["reset_time_s"] is not None]
            summary[v] = {"mean_s": statistics.fmean(xs) if xs else None, "min_s": min(xs, default=None),
                          "max_s": max(xs, default=None), "repetitions": len(xs)}
        out["kinds"][kind] = {"repetitions": reps, "reset_time": summary}
    return out
