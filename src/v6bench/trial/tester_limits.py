"""What the tester's self-test (:mod:`v6bench.selftest`) says about one
trial: above :data:`SELFTEST_MARGIN` of the tester's own capacity at the
frame size a trial is ``tester_limited``; every trial carries the tester's
latency floor and error bar at that size, to be read beside its delays.

A self-test result has ``capacity`` per frame size (``capacity_fps``,
``latency_floor_ns``, ``latency_stddev_ns``). Sizes not measured take the
nearest measured one: for capacity the lowest at this size or larger (the
nearest smaller if none), for the floor the nearest.
"""

from __future__ import annotations

from typing import Any

#: Share of the tester's self-tested capacity above which a trial is the tester's.
SELFTEST_MARGIN = 0.9


def _sizes(selftest: dict[str, Any] | None, field: str) -> dict[int, dict[str, Any]]:
    if not selftest:
        return {}
    return {int(k): v for k, v in selftest.get("capacity", {}).items() if v.get(field)}


def capacity(selftest: dict[str, Any] | None, frame_size: int) -> tuple[float, int] | None:
    """The tester's capacity [frames/s] for ``frame_size`` and the size it was measured at."""
    caps = _sizes(selftest, "capacity_fps")
    if not caps:
        return None
    larger = [s for s in caps if s >= frame_size]
    size = min(larger, key=lambda s: caps[s]["capacity_fps"]) if larger else max(caps)
    return caps[size]["capacity_fps"], size


def limit_reason(selftest: dict[str, Any] | None, frame_size: int, offered_fps: float) -> str | None:
    """Why a trial offering ``offered_fps`` (all directions) is the tester's, or None."""
    cap = capacity(selftest, frame_size)
    if cap and offered_fps > SELFTEST_MARGIN * cap[0]:
        return (f"offered {offered_fps:,.0f} frames/s is above {SELFTEST_MARGIN:.0%} of the tester's self-tested capacity "
                f"{cap[0]:,.0f} frames/s ({cap[1]} B)")
    return None


def latency_floor(selftest: dict[str, Any] | None, frame_size: int) -> dict[str, Any] | None:
    """The tester's own latency floor and error bar [ns] nearest ``frame_size``:
    ``{"floor_ns", "stddev_ns", "tx_stamp_lead_ns", "frame_size",
    "selftest_at_unix_s"}``; ``tx_stamp_lead_ns`` is the median time from a
    frame's transmit stamp to the driver's hand-over (part of the floor)."""
    floors = _sizes(selftest, "latency_floor_ns")
    if not floors or selftest is None:
        return None
    size = min(floors, key=lambda s: (abs(s - frame_size), s))
    f = floors[size]
    return {"floor_ns": f["latency_floor_ns"], "stddev_ns": f.get("latency_stddev_ns"),
            "tx_stamp_lead_ns": f.get("tx_stamp_lead_p50_ns"), "frame_size": size,
            "selftest_at_unix_s": selftest.get("created_at_unix_s")}


def apply(result: dict[str, Any], selftest: dict[str, Any] | None, frame_size: int) -> None:
    """Adds the self-test's verdict and floor to a v6bench trial result;
    ``tester_over_capacity`` tells a load the tester cannot offer at all
    (a repeat cannot help, methods/retry.py) from a passing stall."""
    why = limit_reason(selftest, frame_size, result["intended_fps"])
    result["tester_over_capacity"] = bool(why)
    if why:
        result["tester_limited_reasons"].append(why)
        result["tester_limited"] = True
    result["tester_latency_floor"] = latency_floor(selftest, frame_size)
