"""Back-to-back frames (RFC 2544 §26.4 as updated by RFC 9004).

Needs the throughput first: if the DUT forwards at line rate, no burst
can overflow its buffer and the test does not apply (RFC 9004 §5). Each
repetition binary-searches the longest burst at line rate that loses
nothing (every trial ends with the drain, ≥ 2 s by default); a burst the
tester could not send at line rate (``tester_limited``) says nothing about
the DUT and is tried again, up to ``LIMITED_TRIES`` times. Reported:
average, min, max and standard deviation of the burst length [frames],
the implied buffer time = average / line rate [s], and the corrected
buffer time, which removes what the DUT forwarded while the burst
arrived: the burst lasts N / R, the DUT forwards T × N / R of it, so it
held N × (1 − T / R) frames, which at line rate last
(N / R) × (1 − T / R) seconds (RFC 9004 §5.4).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from ..core.tester import Tester
from ..core.params import check


@dataclass(frozen=True)
class Params:
    repeat: int = 50
    max_burst_s: float = 2.0
    resolution: float = 0.01

    def __post_init__(self) -> None:
        check(1 <= self.repeat <= 1000, "repeat", f"{self.repeat} is outside 1..1000 (RFC 2544 §26.4 asks for 50)")
        check(0 < self.max_burst_s <= 60, "max_burst_s", f"{self.max_burst_s:g} s is outside (0, 60]")
        check(0 < self.resolution < 0.5, "resolution", f"{self.resolution:g} is not a ratio in (0, 0.5)")


#: Times a burst the tester could not send at line rate is tried in all
#: before the repetition stops (a shared machine's tester hiccups now and then).
LIMITED_TRIES = 3


def _longest_burst(tester: Tester, max_frames: int, resolution: float) -> tuple[int | None, bool]:
    """(longest loss-free burst, capped by the tester?) for one repetition."""
    lo, hi = 0, max_frames
    n = max_frames
    for _ in range(64):
        for _ in range(LIMITED_TRIES):
            m = tester.burst(n)
            if not m.tester_limited:
                break
        else:
            return lo or None, True
        if m.lost_frames == 0:
            lo = n
            if n == max_frames:
                break
        else:
            hi = n
        if hi - lo <= max(1, resolution * hi):
            break
        n = (lo + hi) // 2
    return lo, False


def run(tester: Tester, p: Params, throughput_fps: float) -> dict:
    line = tester.line_fps
    if throughput_fps >= line * 0.999:
        return {"applicable": False, "reason": f"throughput {throughput_fps:,.0f} frames/s is line rate: no burst can overflow the DUT (RFC 9004 §5)"}
    max_frames = max(2, int(line * p.max_burst_s))
    bursts, capped = [], False
    for _ in range(p.repeat):
        b, limited = _longest_burst(tester, max_frames, p.resolution)
        if limited:
            capped = True
            break
        bursts.append(b)
    if not bursts:
        return {"applicable": True, "tester_limited": True, "reason": "the tester could not send a burst at line rate"}
    avg = statistics.fmean(bursts)
    implied = avg / line
    return {
        "applicable": True, "tester_limited": capped, "throughput_fps": throughput_fps, "line_fps": line,
        "bursts_frames": bursts, "average_frames": avg, "min_frames": min(bursts), "max_frames": max(bursts),
        "stddev_frames": statistics.stdev(bursts) if len(bursts) > 1 else 0.0,
        "at_max_burst": max(bursts) >= max_frames,
        "implied_buffer_time_s": implied, "corrected_buffer_time_s": implied * (1 - throughput_fps / line),
    }
