"""How long a run has left, from what this session measured of it.

A run's time goes to its tests and to bringing up a lab for each visit of
a scenario (the lab build, VM boots, a table's load and learning). Tests
of one ``[[test]]`` take alike, tests of different ones do not (a
throughput search against a 2-s latency trial), so what is left is each
pending test at its point's mean time where an earlier block ran the same
point (its scenario, mix, frame size, direction and variant: a VM
router's search at 86 B took 100 s where the same ``[[test]]``'s at 1518 B
took 3), else at its ``[[test]]``'s mean time so far (every test's mean
where none of its kind has run yet), plus each lab bring-up still
ahead (a change of scenario among the pending tests) at the mean time
this session's bring-ups of that scenario took (a table's load makes
some far longer than others). A run that starts from its plan
(campaign/estimate.py: ``prior_s``, each ``[[test]]``'s estimated
seconds a point, and ``build_s``, each scenario's seconds a build) has an
estimate from the start: a point no block ran yet is counted at its
``[[test]]``'s planned time scaled by how the measured tests compared with
their plans, or at its ``[[test]]``'s mean so far where that is more (a
test's first point may be its cheapest), and a bring-up at its scenario's planned time until one was
measured (then at every measured bring-up's mean where the scenario has
no plan). Without a plan, before anything was
measured there is no estimate.

Tests whose trial count follows from their parameters (``unsearched``: a
latency trial, a host's runs; campaign/estimate.unsearched) and tests whose
count depends on the DUT (searches, a loss sweep from the line rate)
miss their plans for different reasons: an unsearched test by the machine's
pace, which its own first point shows; a search by how many trials the
router needed, which varies tenfold from point to point (gamess-forwarding
on a VM router: 6 to 198 s a search). So an unsearched ``[[test]]`` that has
run is counted at its own mean, and each kind's ratio to the plan is
measured over its own kind only and trusted in proportion to the points
behind it (:data:`POINTS_TO_TRUST`): in gamess-forwarding, three VM
searches and a loss sweep over their plans had scaled 200 host points
that ran on plan, and the ETA read up to 50 % over the time left.
"""

from __future__ import annotations

import time


#: A kind's measured ratio to its plan, over n points, is trusted n / (n + this): transition's first
#: test, a search at the line rate (1 trial where the plan counted 9), had scaled a plan of 89 min to an
#: ETA of 10, and three VM searches over their plans one of 92 min to 126.
POINTS_TO_TRUST = 10


class Eta:
    def __init__(self, prior_s: dict[int, float] | None = None, build_s: dict[str, float] | None = None,
                 unsearched: frozenset[int] = frozenset()) -> None:
        """``prior_s``: each ``[[test]]``'s planned seconds a point; ``build_s``: each scenario's planned
        seconds a build; ``unsearched``: the ``[[test]]`` s whose trial count follows from their parameters."""
        self._tests: dict[int, list[float]] = {}
        self._points: dict[tuple, list[float]] = {}
        self._visits: dict[str, list[float]] = {}
        self._visit_started: tuple[str, float] | None = None
        self._prior = prior_s or {}
        self._build_s = build_s or {}
        self._unsearched = unsearched

    def visit_begins(self, scenario: str = "") -> None:
        """A lab is being brought up for a visit of ``scenario`` (before its build)."""
        self._visit_started = (scenario, time.monotonic())

    def visit_ready(self) -> None:
        """The visit's lab is up: its first test starts."""
        if self._visit_started is not None:
            scenario, started = self._visit_started
            self._visits.setdefault(scenario, []).append(time.monotonic() - started)
            self._visit_started = None

    def test_took(self, test_index: int, seconds: float, point: tuple = ()) -> None:
        """``[[test]]`` ``test_index``'s point (:func:`point_of`; () for none) took ``seconds``."""
        self._tests.setdefault(test_index, []).append(seconds)
        if point:
            self._points.setdefault(point, []).append(seconds)

    def left_s(self, pending: list) -> float | None:
        """Seconds left for ``pending`` (the run's :class:`.plan.ScheduledTest` s not done, the current
        one first: each has ``test.index``, ``scenario`` and ``repetition``), or None before any test
        ended in a run without a plan."""
        every = [s for xs in self._tests.values() for s in xs]
        if not every and not self._prior:
            return None
        scale = {kind: self._plan_scale(kind) for kind in (True, False)}
        tests = sum(_mean(self._points.get(point_of(p))) or self._point_s(p.test.index, every, scale)
                    for p in pending)
        several = len({p.scenario for p in pending}) > 1
        builds = sum(self._visit_s(b.scenario) for a, b in zip(pending, pending[1:])
                     if a.scenario != b.scenario or (several and a.repetition != b.repetition))
        return tests + builds

    def _visit_s(self, scenario: str) -> float:
        """A bring-up of ``scenario``: its measured mean; else its plan; else every measured bring-up's mean."""
        if xs := self._visits.get(scenario):
            return _mean(xs) or 0.0
        if scenario in self._build_s:
            return self._build_s[scenario]
        return _mean([x for xs in self._visits.values() for x in xs]) or 0.0

    def _plan_scale(self, unsearched: bool) -> float:
        """How the measured tests of one kind (``unsearched`` or not) compared with their plans (time taken /
        time planned), trusted n / (n + :data:`POINTS_TO_TRUST`) over their n points; 1.0 before one ended."""
        planned = [(sum(xs), len(xs) * self._prior[i], len(xs)) for i, xs in self._tests.items()
                   if self._prior.get(i) and (i in self._unsearched) == unsearched]
        took, plan, n = (sum(x[k] for x in planned) for k in range(3))
        if not plan:
            return 1.0
        return 1.0 + (took / plan - 1.0) * n / (n + POINTS_TO_TRUST)

    def _point_s(self, index: int, every: list[float], scale: dict[bool, float]) -> float:
        """A point no block ran yet of ``[[test]]`` ``index``: an unsearched ``[[test]]``'s own mean once it ran;
        else its plan times its kind's ``scale`` (:meth:`_plan_scale`), or the ``[[test]]``'s measured mean
        where that is more (dobrinov2016, run 17: its first search, at the line rate, took 3 s and stood
        for the VM-limited ones of 60-130 s: "ETA 44 min" with 83 left; replayed so, 4 of 219 readings
        outside ±25 %, not 9); unplanned: its ``[[test]]``'s mean, else every measured test's mean."""
        own = _mean(self._tests.get(index))
        if index not in self._prior:
            return own if own is not None else (_mean(every) or 0.0)
        if index in self._unsearched and own is not None:
            return own
        return max(self._prior[index] * scale[index in self._unsearched], own or 0.0)


def _mean(xs: list[float] | None) -> float | None:
    return sum(xs) / len(xs) if xs else None


def point_of(p) -> tuple:
    """A scheduled test's point, the same in every repetition block: its scenario, ``[[test]]``, mix, frame
    size, direction and variant."""
    return (p.scenario, p.test.index, str(p.mix), p.frame_size, p.bidirectional, p.variant)


def text(seconds: float) -> str:
    """Seconds left in words: seconds below 90, minutes and seconds (to 10 s) below 10 min, minutes above
    (whole minutes below 10 were a rounding of up to 30 s: the demo's "ETA 2 min" with 1.4 left read +38 %)."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 600:
        minutes, rest = divmod(int(round(seconds / 10) * 10), 60)
        return f"{minutes} min {rest:02d} s"
    return f"{seconds / 60:.0f} min"


def ends_at(seconds: float, now_s: float | None = None) -> str:
    """The local clock time (HH:MM) ``seconds`` from ``now_s`` (the Unix time; now by default): what the
    progress line shows beside the time left, since it stays true while a long test keeps that line on
    screen, where the minutes left go stale (transition, run 15: a 300-s search's line read "ETA 90 min"
    throughout; 21 of 81 minute-by-minute readings were off by more than 25 %, 2 of 92 read as a test began)."""
    return time.strftime("%H:%M", time.localtime((time.time() if now_s is None else now_s) + seconds))
