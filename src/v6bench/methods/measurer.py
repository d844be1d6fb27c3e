"""The one interface every method depends on: run a trial at a load.

A method asks ``measure(duration_s, load_fps)`` and gets the counts back;
it never knows whether a lab, a physical tester or a simulation answered.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol


@dataclass(frozen=True)
class Measurement:
    """One trial's outcome.

    ``intended_load_fps`` [frames/s] is what was asked (per direction),
    ``offered_load_fps`` what the tester achieved (all directions),
    ``tx_frames``/``rx_frames`` are counts over all streams. A
    ``tester_limited`` trial says nothing about the DUT. ``detail`` is the
    full trial result, if any.
    """

    duration_s: float
    intended_load_fps: float
    offered_load_fps: float
    tx_frames: int
    rx_frames: int
    tester_limited: bool
    detail: dict | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.tx_frames < 0 or self.rx_frames < 0:
            raise ValueError("frame counts are never negative")

    @property
    def lost_frames(self) -> int:
        return max(self.tx_frames - self.rx_frames, 0)

    @property
    def loss_ratio(self) -> float:
        return self.lost_frames / self.tx_frames if self.tx_frames else 0.0


class Measurer(Protocol):
    def measure(self, duration_s: float, load_fps: float) -> Measurement:
        """Runs one trial of ``duration_s`` seconds at ``load_fps`` frames/s per direction."""
        ...
