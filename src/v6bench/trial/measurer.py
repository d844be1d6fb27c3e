"""The lab as a :class:`~v6bench.methods.measurer.Measurer`: each
``measure`` call runs one trial of a fixed mix, frame size and direction."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..lab.state import LabState
from ..methods.measurer import Measurement
from ..rates import Rate
from . import runner
from .request import Mix, TrialRequest


@dataclass(frozen=True)
class LabMeasurer:
    lab: LabState
    mix: Mix
    frame_size: int
    bidirectional: bool = False
    drain_s: float = 2.0
    engine_pid_file: Path | None = None

    def measure(self, duration_s: float, load_fps: float) -> Measurement:
        req = TrialRequest(self.mix, self.frame_size, Rate(load_fps, "fps", f"{load_fps:.0f}fps"), duration_s,
                           self.bidirectional, self.drain_s)
        r = runner.run(self.lab, req, self.engine_pid_file)
        return Measurement(duration_s, load_fps, r["offered_fps"], r["tx_frames"], r["rx_frames"], r["tester_limited"], r)
