"""The pause between the engine's learning (ARP, ND) and a trial's first
frame when the trial sets none (RFC 2544 §23: time for the DUT to settle
after the learning frames).

By default the engine's own (:data:`~v6bench.engine.spec.DEFAULT_SETTLE_S`,
0.5 s; docs/engine-spec.md). ``$V6BENCH_SETTLE_S`` sets another default
[s], for quick looks on namespace routers, which have nothing to settle
(a frame crosses them in microseconds): the test suite runs its trials
with 0.1 s. A trial, campaign or test that sets ``settle_s`` keeps its
own. Every trial result records the pause it had (``settle_s``,
docs/trial-result.md).
"""

from __future__ import annotations

import os

from ..core.errors import UsageError
from ..engine.spec import DEFAULT_SETTLE_S

ENV = "V6BENCH_SETTLE_S"
#: The longest settle a trial takes [s] (as ``settle_s`` itself, trial/request.py).
MAX_SETTLE_S = 60.0


def default_s() -> float | None:
    """``$V6BENCH_SETTLE_S`` [s], or None (the engine's default) when unset or empty."""
    text = os.environ.get(ENV, "").strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        raise UsageError(f"{text!r} is not a number of seconds", ENV) from None
    if not 0 <= value <= MAX_SETTLE_S:
        raise UsageError(f"{value:g} s is outside 0..{MAX_SETTLE_S:g} s", ENV)
    return value


def of(settle_s: float | None) -> float | None:
    """The settle a trial asks the engine for: its own ``settle_s``, else
    ``$V6BENCH_SETTLE_S``, else None (the engine's default)."""
    return settle_s if settle_s is not None else default_s()


def applied_s(settle_s: float | None) -> float:
    """The pause the engine makes for a spec's ``learning_settle_s`` [s]."""
    return DEFAULT_SETTLE_S if settle_s is None else settle_s
