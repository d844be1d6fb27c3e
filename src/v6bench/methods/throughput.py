"""Throughput (RFC 2544 §26.1, RFC 1242 §3.17): NDR, the highest load with
no loss, and PDR, the highest with at most a loss-ratio goal (default
0.5 %), per direction, by RFC 2544 binary search or by MLRsearch
(RFC 9971, formerly draft-ietf-bmwg-mlrsearch).

The binary search starts at the line rate, or (``start = "neighbour"``)
from what the same mix found at the nearest frame size earlier in the
run (campaign/runner.neighbour), which saves trials when points are
alike; MLRsearch finds its own start from the forwarding rate at the
line rate (RFC 9971's initial trials).

The result carries frames/s and the bit rates labelled by layer
(RFC 5180 App. A.1): L2 counts the frame incl. FCS, L1 adds the 20 bytes
of preamble and inter-frame gap.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import binary_search, mlr
from ..core.tester import Tester
from ..core.params import check
from ..core.rates import bit_rates


#: The throughput searches (``search``, ``--search``): RFC 2544's binary search, or MLRsearch (methods/mlr.py).
SEARCHES = ("binary", "mlr")
#: Where the binary search starts (``start``): the line rate, or a neighbouring point's result.
STARTS = ("line", "neighbour")


@dataclass(frozen=True)
class Neighbour:
    """What a neighbouring point found: its NDR and PDR [frames/s per
    direction] (None where it found none) and where, in words."""

    ndr_fps: float | None
    pdr_fps: float | None
    found_at: str


@dataclass(frozen=True)
class Params:
    search: str = "binary"
    trial_duration_s: float = 60.0
    resolution: float = 0.01
    pdr_loss_ratio: float = 0.005
    max_trials: int = 30
    initial_trial_duration_s: float = 1.0
    exceed_ratio: float = 0.5
    duration_sum_s: float | None = None
    start: str = "line"
    confirm_losses: int = 0

    def __post_init__(self) -> None:
        check(self.search in SEARCHES, "search", f"{self.search!r} is not {' or '.join(SEARCHES)}")
        check(0 < self.trial_duration_s <= 86400, "trial_duration_s", f"{self.trial_duration_s:g} s is outside (0, 86400]")
        check(0 < self.resolution < 0.5, "resolution", f"{self.resolution:g} is not a ratio in (0, 0.5)")
        check(0 < self.pdr_loss_ratio < 1, "pdr_loss_ratio", f"{self.pdr_loss_ratio:g} is not a ratio in (0, 1)")
        check(1 <= self.max_trials <= 200, "max_trials", f"{self.max_trials} is outside 1..200")
        check(0 < self.initial_trial_duration_s <= 86400, "initial_trial_duration_s", "must be positive")
        check(0 <= self.exceed_ratio < 1, "exceed_ratio", f"{self.exceed_ratio:g} is not a ratio in [0, 1)")
        check(self.duration_sum_s is None or self.search == "mlr", "duration_sum_s", "applies to search = \"mlr\" only")
        check(self.duration_sum_s is None or self.trial_duration_s <= self.duration_sum_s <= 86400, "duration_sum_s",
              f"{self.duration_sum_s} s is outside [trial_duration_s, 86400]")
        check(0 <= self.confirm_losses <= 5, "confirm_losses", f"{self.confirm_losses} is outside 0..5")
        check(self.confirm_losses == 0 or self.search == "binary", "confirm_losses",
              "applies to search = \"binary\" (MLRsearch's exceed_ratio and duration_sum_s do this)")
        check(self.start in STARTS, "start", f"{self.start!r} is not {' or '.join(STARTS)}")
        check(self.start == "line" or self.search == "binary", "start",
              "a neighbour's start applies to search = \"binary\" (MLRsearch starts from its own first trial)")


def rates(fps: float | None, frame_size: int) -> dict:
    """``fps`` [frames/s] with its L1 and L2 bit rates [b/s]."""
    if fps is None:
        return {"fps": None, "l1_bps": None, "l2_bps": None}
    return {"fps": fps, **bit_rates(fps, frame_size)}


def run(tester: Tester, p: Params, frame_size: int, neighbour: Neighbour | None = None) -> dict:
    """NDR and PDR per direction; ``is_lower_bound`` when the tester capped
    them; MLRsearch's Conditional Throughput (RFC 9971's term: the
    forwarding rate at the goal's relevant lower bound) as ``conditional_fps``;
    ``started_from``, where the binary search started (``neighbour`` is used
    only with ``start = "neighbour"``; without one, the search starts at the
    line rate and says so)."""
    line = tester.line_fps
    out: dict = {"search": p.search, "line_rate": rates(line, frame_size)}
    if p.search == "binary":
        memo = binary_search.Memo(tester)
        use = neighbour if p.start == "neighbour" else None
        if p.start == "neighbour":
            out["started_from"] = (f"the neighbour's result ({use.found_at})" if use is not None
                                   else "the line rate: no neighbouring point measured yet")
        searched: list[tuple[str, float, float | None, float]] = []
        for name, goal in (("ndr", 0.0), ("pdr", p.pdr_loss_ratio)):
            # The PDR from the neighbour's PDR, else from this point's NDR (never above it; its trial is reused).
            start = None if use is None else use.ndr_fps if name == "ndr" else use.pdr_fps or searched[0][3] or None
            r = binary_search.search(memo, p.trial_duration_s, line, p.resolution, goal, p.max_trials, start,
                                     p.confirm_losses)
            searched.append((name, goal, start, r.throughput_fps))
        # Each goal read over both searches' trials (binary_search.Memo.relevant): the NDR never above the PDR.
        goals = [(name, goal, r.throughput_fps, r.failed_fps if r.failed_fps is not None else r.tester_limited_fps,
                  r.is_lower_bound, {"start_fps": start} if p.start == "neighbour" else {})
                 for name, goal, start, _ in searched for r in [memo.relevant(goal)]]
    else:
        outcomes, _ = mlr.search(tester, line, (0.0, p.pdr_loss_ratio), p.trial_duration_s, p.initial_trial_duration_s,
                                 p.resolution, p.exceed_ratio, p.duration_sum_s)
        goals = [(name, o.loss_ratio, o.lower_fps or 0.0, o.upper_fps, o.is_lower_bound,
                  {"conditional_fps": o.conditional_fps})
                 for name, o in zip(("ndr", "pdr"), outcomes)]
    for name, goal, fps, upper, lower_bound, extra in goals:
        out[name] = {"loss_ratio_goal": goal, **rates(fps, frame_size), "upper_fps": upper,
                     "is_lower_bound": lower_bound, "ratio_of_line": fps / line if line else None, **extra}
    out["ndr_fps"], out["pdr_fps"] = out["ndr"]["fps"], out["pdr"]["fps"]
    return out
