"""System recovery (RFC 2544 §26.5): overload the DUT at 110 % of its
throughput (line rate if that is lower) for ``overload_s`` (≥ 60 s in the
RFC), then drop to 50 % in the same stream of frames; the recovery time is
from the drop to the last frame lost, per IP version. The engine reports
each stream's last lost frame and its due time (``loss_window``), so no
capture is needed; a last loss before the drop is a recovery time of 0. A
DUT that forwards at line rate cannot be overloaded, and an overload that
loses nothing cannot show a recovery: both are "not applicable".
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from ..core.tester import Tester
from ..core.params import check


@dataclass(frozen=True)
class Params:
    overload_s: float = 60.0
    hold_s: float = 10.0
    overload_pct: float = 110.0
    reduced_pct: float = 50.0
    repeat: int = 1

    def __post_init__(self) -> None:
        check(0 < self.overload_s <= 3600, "overload_s", f"{self.overload_s:g} s is outside (0, 3600]")
        check(0 < self.hold_s <= 3600, "hold_s", f"{self.hold_s:g} s is outside (0, 3600]")
        check(100 < self.overload_pct <= 1000, "overload_pct", "must be above 100 %")
        check(0 < self.reduced_pct < 100, "reduced_pct", "must be below 100 %")
        check(1 <= self.repeat <= 1000, "repeat", "is outside 1..1000")


def run(tester: Tester, p: Params, throughput_fps: float) -> dict:
    over = min(throughput_fps * p.overload_pct / 100, tester.line_fps)
    low = throughput_fps * p.reduced_pct / 100
    if over <= throughput_fps * 1.001:
        return {"throughput_fps": throughput_fps, "overload_fps": over, "applicable": False,
                "reason": f"throughput {throughput_fps:,.0f} frames/s is line rate: the DUT cannot be overloaded (RFC 2544 §26.5)"}
    reps = []
    for _ in range(p.repeat):
        m = tester.step(p.overload_s + p.hold_s, over, p.overload_s, low)
        fams = {}
        for v, ss in m.families().items():
            windows = [s["loss_window"] for s in ss if s.get("loss_window")]
            last = max((w["last_due_s"] for w in windows), default=None)
            fams[str(v)] = {"lost_frames": sum(s["lost_frames"] for s in ss),
                            "recovery_s": None if last is None else max(0.0, last - p.overload_s)}
        reps.append({"tester_limited": m.tester_limited, "lost_frames": m.lost_frames, "families": fams})
    valid = [r for r in reps if not r["tester_limited"] and r["lost_frames"] > 0]
    summary = {}
    for v in sorted({v for r in valid for v in r["families"]}):
        xs = [r["families"][v]["recovery_s"] for r in valid if r["families"].get(v, {}).get("recovery_s") is not None]
        summary[v] = {"mean_s": statistics.fmean(xs) if xs else None, "min_s": min(xs, default=None), "max_s": max(xs, default=None)}
    return {"throughput_fps": throughput_fps, "overload_fps": over, "reduced_fps": low, "repetitions": reps,
            "applicable": bool(valid), "recovery": summary,
            **({} if valid else {"reason": "the overload lost no frame (or every repetition was tester-limited): nothing to recover from"})}
