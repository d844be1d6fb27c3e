"""Frame loss under mesh traffic (RFC 2889 §5.1 fully meshed and partially
meshed throughput and loss; seed 004 §2.3–2.4): at each offered load
(per sending port, of its own link's line rate or as a rate), every flow's
loss and the total, by IP version. The traffic pattern and its flows are
in :mod:`v6bench.trial.mesh`; a tester-limited trial is recorded and
flagged, never read as the DUT's loss.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.params import check
from ..core.rates import check_rates, line_rate_fps, parse_rate
from ..core.frames import check_mesh_pattern
from ..core.tester import Tester


@dataclass(frozen=True)
class Params:
    pattern: str = "partial"
    #: Offered loads per sending port: "50%" (of line, L1), "20kpps", "30Mbps".
    loads: tuple[str, ...] = ("10%", "25%", "50%", "75%", "100%")
    trial_duration_s: float = 30.0  # RFC 2889 §5.1.3's default trial duration

    def __post_init__(self) -> None:
        check_mesh_pattern(self.pattern, "pattern")
        check(0 < self.trial_duration_s <= 86400, "trial_duration_s", f"{self.trial_duration_s:g} s is outside (0, 86400]")
        check(bool(self.loads), "loads", "give at least one load")
        check_rates(self.loads, "loads")


def run(tester: Tester, p: Params, frame_size: int, link_speed_bps: float) -> dict:
    rows = []
    for text in p.loads:
        # A mesh's frames cross its links whole and no tunnel (trial/fit.check_mesh): its path's line rate is the link's.
        fps = parse_rate(text).fps(frame_size, line_rate_fps(link_speed_bps, frame_size))
        m = tester.mesh(p.pattern, p.trial_duration_s, fps)
        flows = [{"flow": s["name"], "direction": s["direction"], "ip_version": s["ip_version"],
                  "tx_frames": s["tx_frames"], "rx_frames": s["rx_frames"], "lost_frames": s["lost_frames"],
                  "loss_ratio": s["loss_ratio"]} for s in m.streams]
        families = {}
        for v, ss in m.families().items():
            tx, rx = sum(s["tx_frames"] for s in ss), sum(s["rx_frames"] for s in ss)
            families[str(v)] = {"tx_frames": tx, "rx_frames": rx, "lost_frames": tx - rx, "loss_ratio": (tx - rx) / tx if tx else 0.0}
        rows.append({"load": text, "load_per_port_fps": fps, "offered_fps": m.offered_load_fps, "tx_frames": m.tx_frames,
                     "rx_frames": m.rx_frames, "lost_frames": m.lost_frames, "loss_ratio": m.loss_ratio,
                     "tester_limited": m.tester_limited, "start_spread_s": (m.detail or {}).get("mesh_start_spread_s"),
                     "families": families, "flows": flows})
    return {"pattern": p.pattern, "loads": rows}
