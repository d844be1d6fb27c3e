"""Frame loss rate (RFC 2544 §26.3): (sent − received) / sent at offered
loads from 100 % of line rate down in steps of at most 10 %, until two
successive loads lose nothing; or at an explicit list of loads (seed 000
swept 10..95 Mb/s). A tester-limited trial is recorded but never counts
as a loss-free load."""

from __future__ import annotations

from dataclasses import dataclass

from ..core.tester import Tester
from ..core.params import check


@dataclass(frozen=True)
class Params:
    trial_duration_s: float = 60.0
    step_pct: float = 10.0
    loads_pct: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        check(0 < self.trial_duration_s <= 86400, "trial_duration_s", f"{self.trial_duration_s:g} s is outside (0, 86400]")
        check(0 < self.step_pct <= 10, "step_pct", f"{self.step_pct:g} % is outside (0, 10] (RFC 2544 §26.3)")
        for x in self.loads_pct:
            check(0 < x <= 100, "loads_pct", f"{x:g} % is outside (0, 100]")


def loads_pct(p: Params) -> list[float]:
    """The loads in percent of line rate, in the order they run."""
    if p.loads_pct:
        return list(p.loads_pct)
    n = int(round(100 / p.step_pct))
    return [round(100 - k * p.step_pct, 6) for k in range(n) if 100 - k * p.step_pct > 1e-9]


def run(tester: Tester, p: Params) -> dict:
    rows = []
    clean_in_a_row = 0
    for pct in loads_pct(p):
        m = tester.measure(p.trial_duration_s, tester.line_fps * pct / 100)
        rows.append({"load_pct": pct, "load_fps": m.intended_load_fps, "tx_frames": m.tx_frames, "rx_frames": m.rx_frames,
                     "lost_frames": m.lost_frames, "loss_ratio": m.loss_ratio, "tester_limited": m.tester_limited,
                     "families": {str(v): _family_loss(ss) for v, ss in m.families().items()}})
        clean_in_a_row = clean_in_a_row + 1 if (m.lost_frames == 0 and not m.tester_limited) else 0
        if not p.loads_pct and clean_in_a_row >= 2:
            break
    return {"loads": rows, "ended_by": "two loss-free loads" if clean_in_a_row >= 2 and not p.loads_pct else "load list"}


def _family_loss(streams: list[dict]) -> dict:
    tx = sum(s["tx_frames"] for s in streams)
    rx = sum(s["rx_frames"] for s in streams)
    return {"tx_frames": tx, "rx_frames": rx, "loss_ratio": (tx - rx) / tx if tx else 0.0}
