"""Runs a campaign's matrix, resumably, recording every trial.

The matrix expands, in file order, to one *point* per test × direction ×
mix × frame size × repetition, each with a stable key. :func:`schedule`
orders the points for a run (randomized repetition blocks, so that drift
over a run cannot read as a difference between the series a report
compares); the order and its seed are recorded with the run
(:func:`design_record`) and a resumed run follows the recorded order. A
point whose test finished in this run is skipped on ``--resume``. A point that was in
flight when the run stopped is run again, but the trials its interrupted
attempt already recorded are replayed, not repeated, as long as the
procedure asks for the same trials in the same order (every search here
is deterministic given its trial results); they are copied to the new
attempt with ``extra.replayed_from_trial``.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import Callable

from ..methods import registry
from ..report.results import headline
from ..core.tester import ConnectionTester, HostTester, Measurement, Tester
from ..store.db import Store
from ..core import frames
from ..core.frames import Mix
from ..lab.model.dut import flow2_scenarios
from .eta import Eta
from .eta import text as eta_text
from .spec import Campaign, TestSpec


@dataclass(frozen=True)
class ScheduledTest:
    """One stored test. Host-stack kinds have no frames (``frame_size``
    0) and a ``variant`` instead: their protocol and message or payload size."""

    test: TestSpec
    mix: Mix
    frame_size: int
    bidirectional: bool
    repetition: int
    variant: tuple[tuple[str, object], ...] = ()
    #: The campaign scenario ("" for a campaign without [[scenario]]).
    scenario: str = ""

    @property
    def key(self) -> str:
        d = "bi" if self.bidirectional else "uni"
        var = "".join(f":{k}={v}" for k, v in self.variant)
        where = f"{self.scenario}/" if self.scenario else ""
        return f"{where}{self.test.index}:{self.test.kind}:{self.mix}:{self.frame_size}:{d}:{self.repetition}{var}"

    def describe(self) -> str:
        rep = f" #{self.repetition}" if self.test.matrix.repeat > 1 else ""
        where = f"[{self.scenario}] " if self.scenario else ""
        if self.variant:
            version = 4 if self.mix.ipv4_pct else 6
            return f"{where}{self.test.kind} IPv{version} " + " ".join(f"{v}" for _, v in self.variant) + rep
        d = "bidirectional" if self.bidirectional else "unidirectional"
        return f"{where}{self.test.kind} {self.mix} {self.frame_size} B {d}{rep}"


def expand(c: Campaign) -> list[ScheduledTest]:
    """Every point, scenario by scenario, in file order within each."""
    out = []
    for sc in c.scenarios:
        for t in c.tests:
            if t.index not in sc.tests:
                continue
            k = registry.kind(t.kind)
            reps = range(1, t.matrix.repeat + 1)
            if isinstance(k, registry.HostKind):
                out += [ScheduledTest(t, mix, 0, False, rep, tuple(v.items()), sc.name)
                        for mix in t.matrix.mixes for v in k.variants(t.params) for rep in reps]
            else:
                out += [ScheduledTest(t, mix, fs, d == "bi", rep, (), sc.name)
                        for d in t.matrix.directions for mix in t.matrix.mixes for fs in t.matrix.frame_sizes for rep in reps]
    return out


def known_ndr(store: Store, run_id: int, p: ScheduledTest) -> tuple[float | None, bool, str]:
    """The NDR [frames/s per direction] this run measured at ``p``'s point
    (its mix, frame size, direction, traffic, scenario), whether it is a
    lower bound, and where it came from (:class:`~v6bench.methods.registry.Point`).
    A mixed mix no search ran for takes the lower of IPv4's and IPv6's NDRs
    where both were measured (a paired latency test's 50/50 mix beside the
    pure mixes' searches): each family forwards its share of that rate
    without loss, as it forwards all of it alone; the lower of a lower
    bound and a measured value is a lower bound only when it is the bound."""
    def ndr(mix: str) -> tuple[float, bool] | None:
        r = store.test_result(run_id, "throughput", mix, p.frame_size, p.bidirectional,
                              {**p.test.traffic.frames_json(), "scenario": p.scenario or None})
        return (r["ndr_fps"], bool((r.get("ndr") or {}).get("is_lower_bound"))) if r and r.get("ndr_fps") is not None else None

    own = ndr(str(p.mix))
    if own:
        return (*own, "measured earlier in this run")
    if p.mix.ipv4_pct and p.mix.ipv6_pct:
        both = [ndr(str(m)) for m in frames.PURE_MIXES]
        if all(both):
            fps, lower_bound = min(both)
            return fps, lower_bound, "the lower of IPv4's and IPv6's, measured earlier in this run"
    return None, False, ""


def _stage(p: ScheduledTest) -> int:
    """0 for the tests others start from (throughput), 1 for the rest."""
    k = registry.kind(p.test.kind)
    return 1 if isinstance(k, registry.Kind) and k.needs_throughput(p.test.params) else 0


def schedule(c: Campaign, seed: int) -> list[ScheduledTest]:
    """The run order. ``randomized``: one block per repetition number, in
    order; each block visits its scenarios in a random order (one lab
    build per scenario and block) and runs each scenario's points in a
    random order, those that start from a throughput after the searches
    they may reuse. ``file``: :func:`expand`'s order. Deterministic given
    ``seed``."""
    points = expand(c)
    if c.design.order == "file":
        return points
    rng = random.Random(seed)
    out: list[ScheduledTest] = []
    for block in sorted({p.repetition for p in points}):
        here = [p for p in points if p.repetition == block]
        scenarios = list(dict.fromkeys(p.scenario for p in here))
        rng.shuffle(scenarios)
        for sc in scenarios:
            for stage in (0, 1):
                batch = [p for p in here if p.scenario == sc and _stage(p) == stage]
                rng.shuffle(batch)
                out += batch
    return out


def design_record(c: Campaign, seed: int, plan: list[ScheduledTest]) -> dict:
    """What the run stores of its design: order, seed, blocks and the point keys in run order."""
    return {"order": c.design.order, "seed": seed, "blocks": len({p.repetition for p in plan}),
            "schedule": [p.key for p in plan]}


def planned(c: Campaign, store: Store, run_id: int) -> list[ScheduledTest]:
    """The run's recorded order (points the record lacks after, in file
    order); a run recorded without a design: file order."""
    points = expand(c)
    recorded = (store.run(run_id)["environment"].get("design") or {}).get("schedule")
    if not recorded:
        return points
    by_key = {p.key: p for p in points}
    first = [by_key[k] for k in recorded if k in by_key]
    return first + [p for p in points if p.key not in set(recorded)]


def visits(plan: list[ScheduledTest], done: set[str]) -> list[tuple[str, list[ScheduledTest]]]:
    """The points still to run, in order, cut where the scenario changes:
    each visit is one lab."""
    out: list[tuple[str, list[ScheduledTest]]] = []
    for p in plan:
        if p.key in done:
            continue
        if out and out[-1][0] == p.scenario:
            out[-1][1].append(p)
        else:
            out.append((p.scenario, [p]))
    return out


class Recorder:
    """A :class:`Tester` that writes every trial to the store as it ends.

    ``replay``: the trials test ``test_id`` recorded in an interrupted
    attempt (seq 0, 1, …). While the calls match them they are answered
    from the store and stay where they are; at the first call that does
    not match, the attempt's remaining trials are deleted (they answered
    calls this attempt does not make) and trials are measured from there.
    Each trial is in the database once, in the test's own row.
    """

    def __init__(self, tester: Tester, store: Store, test_id: int, replay: list[dict]) -> None:
        self.tester, self.store, self.test_id, self.replay = tester, store, test_id, list(replay)
        self.line_fps = tester.line_fps
        self.seq = 0
        self.replayed = 0

    def _call(self, call: str, args: dict, fn: Callable[[], Measurement]) -> Measurement:
        if self.replay and self.replay[0]["call"] == call and self.replay[0]["call_args"] == args:
            r = self.replay.pop(0)
            m = Measurement(r["duration_s"], r["intended_fps"], r["offered_fps"], r["tx_frames"], r["rx_frames"],
                            bool(r["tester_limited"]), r["result"], tuple(r["streams"]), r["extra"] or {})
            self.replayed += 1
        else:
            if self.replay:
                self.store.delete_trials(self.test_id, from_seq=self.seq)
                self.replay = []
            m = fn()
            self.store.add_trial(self.test_id, self.seq, call, args, m)
        self.seq += 1
        return m

    def measure(self, duration_s: float, load_fps: float) -> Measurement:
        return self._call("measure", {"duration_s": duration_s, "load_fps": load_fps},
                          lambda: self.tester.measure(duration_s, load_fps))

    def burst(self, frames: int) -> Measurement:
        return self._call("burst", {"frames": frames}, lambda: self.tester.burst(frames))

    def step(self, duration_s: float, load_fps: float, after_s: float, then_fps: float) -> Measurement:
        return self._call("step", {"duration_s": duration_s, "load_fps": load_fps, "after_s": after_s, "then_fps": then_fps},
                          lambda: self.tester.step(duration_s, load_fps, after_s, then_fps))

    def mesh(self, pattern: str, duration_s: float, load_fps: float) -> Measurement:
        return self._call("mesh", {"pattern": pattern, "duration_s": duration_s, "load_fps": load_fps},
                          lambda: self.tester.mesh(pattern, duration_s, load_fps))

    def reset(self, duration_s: float, load_fps: float, at_s: float, kind: str) -> Measurement:
        return self._call("reset", {"duration_s": duration_s, "load_fps": load_fps, "at_s": at_s, "kind": kind},
                          lambda: self.tester.reset(duration_s, load_fps, at_s, kind))

    def connections(self) -> ConnectionTester:
        """The tester's RFC 9693 phases, each ``open`` and ``validate``
        stored as a trial of this test. They are never replayed: a phase's
        outcome depends on the table the DUT holds, which a replay would
        not rebuild, so an interrupted attempt's trials are deleted and
        the test measured again from its first."""
        if self.replay:
            self.store.delete_trials(self.test_id, from_seq=self.seq)
            self.replay = []
        return _RecordedConnections(self, self.tester.connections())


class _RecordedConnections:
    """A :class:`ConnectionTester` whose phases a :class:`Recorder` stores."""

    def __init__(self, recorder: Recorder, tester: ConnectionTester) -> None:
        self.recorder, self.tester = recorder, tester

    def clear(self) -> None:
        self.tester.clear()

    def tear_down(self) -> float:
        return self.tester.tear_down()

    def open(self, connections: int, rate_fps: float) -> Measurement:
        return self.recorder._call("open", {"connections": connections, "rate_fps": rate_fps},
                                   lambda: self.tester.open(connections, rate_fps))

    def validate(self, connections: int, rate_fps: float) -> Measurement:
        return self.recorder._call("validate", {"connections": connections, "rate_fps": rate_fps},
                                   lambda: self.tester.validate(connections, rate_fps))


def resuming(run_id: int, plan: list[ScheduledTest], done: set[str]) -> str:
    return f"resuming run {run_id}: {len(done & {p.key for p in plan})} of {len(plan)} tests already done"


def run(c: Campaign, store: Store, run_id: int, make_tester: Callable[[ScheduledTest], Tester | HostTester],
        progress: Callable[[str], None], scenario: str | None = None, points: list[ScheduledTest] | None = None,
        eta: Eta | None = None, plan: list[ScheduledTest] | None = None) -> dict:
    """Runs the points of the run's order (:func:`planned`) not done yet in
    ``run_id``: all of them, those of ``scenario``, or ``points`` (one
    visit of the session); returns counts. ``eta``: what this session
    measured so far (:mod:`.eta`: test times, lab bring-ups), added to;
    ``plan``: the run's order if the caller has it (else read from the
    run). The caller brings up the lab and marks the run finished,
    interrupted or failed."""
    plan = planned(c, store, run_id) if plan is None else plan
    done = store.done_points(run_id)
    pending = [p for p in plan if p.key not in done]
    todo = [p for p in (points if points is not None else plan)
            if p.key not in done and (scenario is None or p.scenario == scenario)]
    if points is None and done and todo and todo[0].key == pending[0].key:
        progress(resuming(run_id, plan, done))
    position_of = {p.key: n for n, p in enumerate(plan, start=1)}
    sc_of = {x.name: x for x in c.scenarios}
    eta = Eta() if eta is None else eta
    eta.visit_ready()
    for p in todo:
        position = position_of[p.key]
        bar = "#" * round(20 * (position - 1) / len(plan))
        left_s = eta.left_s([q for q in plan[position - 1:] if q.key not in done])
        progress(f"[{bar:<20}] {position}/{len(plan)} {p.describe()}" + (f" · ETA {eta_text(left_s)}" if left_s else ""))
        sc = sc_of[p.scenario]
        # An interrupted attempt (a kill, Ctrl-C, a failure) is continued in its own row: one row per test.
        test_id = store.unfinished_attempt(run_id, p.key)
        replay = store.trials(test_id) if test_id else []
        if test_id:
            store.restart_test(test_id)
        else:
            params = {"params": p.test.params.__dict__, "throughput_search": p.test.throughput_search.__dict__,
                      "drain_s": p.test.matrix.drain_s, **p.test.traffic.to_json(), "variant": dict(p.variant),
                      **({"settle_s": p.test.matrix.settle_s} if p.test.matrix.settle_s is not None else {}),
                      **({"scenario": p.scenario} if p.scenario else {}),
                      **({"control_of": sc.control_of} if sc.control_of else {}),
                      **({"flow2": f2} if (f2 := flow2_scenarios(sc.dut, p.test.traffic)) else {}),
                      **({"flow2_dut": sorted(str(v) for v in d2)} if (d2 := sc.dut.on_flow2()) else {})}
            test_id = store.start_test(run_id, p.key, p.test.kind, str(p.mix), p.frame_size, p.bidirectional,
                                       p.repetition, params)
        started = time.monotonic()
        k = registry.kind(p.test.kind)
        rec = None
        try:
            if isinstance(k, registry.HostKind):
                result = k.procedure(make_tester(p), p.test.params, 4 if p.mix.ipv4_pct else 6, dict(p.variant))
            else:
                rec = Recorder(make_tester(p), store, test_id, replay)
                point = registry.Point(p.frame_size, sc.lab.link_speed_bps, *known_ndr(store, run_id, p))
                result = registry.run(k, rec, p.test.params, point, p.test.throughput_search)
        except KeyboardInterrupt:
            store.finish_test(test_id, "interrupted")
            raise
        except Exception as e:
            store.finish_test(test_id, "failed", error=f"{type(e).__name__}: {e}")
            raise
        store.finish_test(test_id, "done", result)
        took = time.monotonic() - started
        eta.test_took(p.test.index, took)
        done.add(p.key)
        replayed = f", {rec.replayed} trials replayed" if rec and rec.replayed else ""
        trials = f"{rec.seq} trials, " if rec else ""
        progress(f"    {headline(p.test.kind, result)} ({trials}{took:.0f} s{replayed})")
    return {"tests": len(plan), "ran": len(todo)}
