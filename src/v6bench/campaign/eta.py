"""How long a run has left, from what this session measured of it.

A run's time goes to its tests and to bringing up a lab for each visit of
a scenario (the lab build, VM boots, a table's load and learning). Tests
of one ``[[test]]`` take alike, tests of different ones do not (a
throughput search against a 2-s latency trial), so what is left is each
pending test at its own ``[[test]]``'s mean time so far (every test's
mean where none of its kind has run yet) plus each lab bring-up still
ahead (a change of scenario among the pending tests) at the mean time
this session's bring-ups took. Before anything was measured there is no
estimate.
"""

from __future__ import annotations

import time


class Eta:
    def __init__(self) -> None:
        self._tests: dict[int, list[float]] = {}
        self._visits: list[float] = []
        self._visit_started: float | None = None

    def visit_begins(self) -> None:
        """A lab is being brought up for a visit (before its build)."""
        self._visit_started = time.monotonic()

    def visit_ready(self) -> None:
        """The visit's lab is up: its first test starts."""
        if self._visit_started is not None:
            self._visits.append(time.monotonic() - self._visit_started)
            self._visit_started = None

    def test_took(self, test_index: int, seconds: float) -> None:
        self._tests.setdefault(test_index, []).append(seconds)

    def left_s(self, pending: list) -> float | None:
        """Seconds left for ``pending`` (the run's :class:`.plan.ScheduledTest` s not done, the current
        one first: each has ``test.index`` and ``scenario``), or None before any test ended."""
        every = [s for xs in self._tests.values() for s in xs]
        if not every:
            return None
        overall = sum(every) / len(every)
        tests = sum((sum(xs) / len(xs)) if (xs := self._tests.get(p.test.index)) else overall for p in pending)
        changes = sum(1 for a, b in zip(pending, pending[1:]) if a.scenario != b.scenario)
        visit = sum(self._visits) / len(self._visits) if self._visits else 0.0
        return tests + changes * visit


def text(seconds: float) -> str:
    return f"{seconds / 60:.0f} min" if seconds >= 90 else f"{seconds:.0f} s"
