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
#: The longest settle a trial takes [s], whoever sets it.
MAX_SETTLE_S = 60.0


def check(settle_s: float, field: str) -> float:
    """``settle_s`` if within 0..:data:`MAX_SETTLE_S`, else a UsageError naming ``field``."""
    if not 0 <= settle_s <= MAX_SETTLE_S:
        raise UsageError(f"{settle_s:g} s is outside 0..{MAX_SETTLE_S:g} s", field)
    return settle_s


def default_s() -> float | None:
    """``$V6BENCH_SETTLE_S`` [s], or None (the engine's default) when unset or empty."""
    text = os.environ.get(ENV, "").strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        raise UsageError(f"{text!r} is not a number of seconds", ENV) from None
    return check(value, ENV)


def of(settle_s: float | None) -> float | None:
    """The settle a trial asks the engine for: its own ``settle_s``, else
    ``$V6BENCH_SETTLE_S``, else None (the engine's default)."""
    return settle_s if settle_s is not None else default_s()


def applied_s(settle_s: float | None) -> float:
    """The pause the engine makes for a spec's ``learning_settle_s`` [s]."""
    return DEFAULT_SETTLE_S if settle_s is None else settle_s
