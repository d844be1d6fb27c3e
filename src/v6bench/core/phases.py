"""Where a run's time goes: a clock of exclusive phases (docs/report.md,
"Where the time went").

Code that waits or works marks it ``with phase("lab up and down"):``; a
phase entered inside another pauses the outer one, so the totals never
count a second twice and add up to the time spent inside phases. The
engine's own run is split after it returns into what its result says
(learning and settle, traffic, drain; :func:`split`). Inside an opaque
phase (:data:`OPAQUE`: the self-test) nothing is split out. A run reads the
totals (:func:`totals`) and stores them with itself; the time outside
every phase (Python, the store, the report of each test) is the rest of
its wall time. One clock per process, on the thread that runs the
campaign: a phase on another thread is not counted.
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from typing import Iterator

#: The phases, in the order a report lists them.
PHASES = ("self-test", "lab up and down", "table warm-up", "between trials", "DUT restabilizes", "preliminary phase",
          "observe the DUT", "engine start and stop", "learning and settle", "traffic", "drain", "host-stack runs")

#: Phases whose own work is what they time: phases entered inside them count to them (the self-test's
#: trials are the self-test's time, not the run's traffic).
OPAQUE = frozenset({"self-test", "table warm-up", "preliminary phase"})

_totals: dict[str, float] = {}
_stack: list[list] = []  # [name, started] of the phases entered, innermost last
_owner = threading.get_ident()


def reset() -> None:
    """Starts the clock anew on this thread (a run's start)."""
    global _owner
    _totals.clear()
    _stack.clear()
    _owner = threading.get_ident()


@contextmanager
def phase(name: str) -> Iterator[None]:
    """Counts the time inside to ``name`` (one of :data:`PHASES`), less
    what phases entered inside count."""
    if name not in PHASES:
        raise ValueError(f"phase {name!r} is not one of {PHASES}")
    if not _counts():
        yield
        return
    now = time.monotonic()
    if _stack:
        outer = _stack[-1]
        _totals[outer[0]] = _totals.get(outer[0], 0.0) + now - outer[1]
    _stack.append([name, now])
    try:
        yield
    finally:
        now = time.monotonic()
        name_, started = _stack.pop()
        _totals[name_] = _totals.get(name_, 0.0) + now - started
        if _stack:
            _stack[-1][1] = now


def split(whole: str, parts: dict[str, float]) -> None:
    """Moves ``parts`` (phase → seconds, as a result measured them) out of
    ``whole``'s total, never below zero."""
    if not _counts():
        return
    for name, seconds in parts.items():
        if name not in PHASES:
            raise ValueError(f"phase {name!r} is not one of {PHASES}")
        moved = max(0.0, min(seconds, _totals.get(whole, 0.0)))
        _totals[whole] = _totals.get(whole, 0.0) - moved
        _totals[name] = _totals.get(name, 0.0) + moved


def _counts() -> bool:
    """Whether a phase entered now is counted apart: on the clock's thread, not inside an opaque phase."""
    return threading.get_ident() == _owner and not any(name in OPAQUE for name, _ in _stack)


def totals() -> dict[str, float]:
    """Seconds per phase so far [s], in :data:`PHASES` order."""
    return {name: round(_totals[name], 3) for name in PHASES if name in _totals}


def since(before: dict[str, float], names: tuple[str, ...]) -> float:
    """Seconds ``names`` counted since ``before`` (an earlier :func:`totals`) [s]."""
    now = totals()
    return sum(now.get(n, 0.0) - before.get(n, 0.0) for n in names)
