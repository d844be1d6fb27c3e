"""The netns tier's one retry rule: a trial the tester spoiled is run again.

On this shared 2-vCPU machine a host stall now and then spoils a trial:
the tester's sender falls behind or its receive queue overflows while it
is descheduled. The engine detects it and says why (``tester_limited``
and its reasons; v6bench adds ``suspect`` delays); such a trial says
nothing of the DUT, and v6bench's own methods run it again
(methods/retry.py, ``RETRIES`` more times). A test that asserts what a
clean trial shows does the same through :func:`unspoiled`, then asserts
on the trial it kept. A test whose subject is a spoiled trial (a stall it
injects, a far end that cannot receive) does not retry.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Iterator

from v6bench.methods.retry import RETRIES
from v6bench.trial.execute import suspect_reasons

#: At most this many runs of one trial: the first and the product's own repeats.
TRIAL_RUNS = 1 + RETRIES
#: Called before a trial runs again: each capture open around it starts afresh (cli_site.capture), so its
#: file holds the kept trial's frames alone (one CI run captured a spoiled trial's 1,000 frames and the
#: repeat's, where the test counted 1,000).
BEFORE_RETRY: list[Callable[[], None]] = []


@contextmanager
def before_retry(restart: Callable[[], None]) -> Iterator[None]:
    """Calls ``restart`` before each repeat of a spoiled trial run inside
    the block (a capture started afresh, counters read again), never after it."""
    BEFORE_RETRY.append(restart)
    try:
        yield
    finally:
        if restart in BEFORE_RETRY:
            BEFORE_RETRY.remove(restart)


def start_afresh() -> None:
    """What a repeat of a spoiled trial does first: every capture open around
    it starts afresh (the restarts :func:`before_retry` holds)."""
    for restart in list(BEFORE_RETRY):
        restart()


def spoiled(result: dict) -> bool:
    """Whether the tester spoiled a result (the engine's, or ``v6bench trial
    --json``'s): tester-limited by a stall (a load beyond the tester's
    capacity is not retried: a repeat cannot change it), or with suspect
    delays (v6bench's ``suspect_reasons``; for an engine result, the same
    rule applied to its streams: a frame received "before" it was sent is
    counted but not timed)."""
    limited = result["tester_limited"] and not result.get("tester_over_capacity")
    suspect = result["suspect_reasons"] if "suspect_reasons" in result else suspect_reasons(result)
    return bool(limited or suspect)


def unspoiled(run: Callable[[], dict]) -> dict:
    """The first of at most :data:`TRIAL_RUNS` results of ``run()`` the
    tester did not spoil; if all were, the last, so the test's own
    assertion says what failed and why."""
    for attempt in range(TRIAL_RUNS):
        if attempt:
            start_afresh()
        result = run()
        if not spoiled(result):
            break
    return result
