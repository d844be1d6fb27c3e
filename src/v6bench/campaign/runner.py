"""Conducts a campaign run from start to end: the self-tests it needs,
the run record in the results database, its order (:mod:`.plan`), one
lab a visit of a scenario, every point of a visit measured and stored
(:mod:`.recorder`), and the run's final status (``finished``,
``interrupted`` on Ctrl-C, ``failed`` on an error). ``v6bench test KIND``
is a campaign of one test built from the options.

A point whose test finished in this run is skipped on ``--resume``; one
that was in flight when the run stopped is run again in its own row, its
recorded trials replayed (:class:`.recorder.Recorder`). A point the DUT
refused (:class:`~..core.errors.Refused`) is stored ``failed`` with the
reason and the run goes on; a resumed run tries it again.
"""

from __future__ import annotations

import secrets
import sys
import time
from typing import Any, Callable

from .. import __version__, selftest
from ..core import frames, phases
from ..core.errors import Refused, UsageError
from ..core.tester import HostTester, Tester
from ..host import iperf
from ..host.stack_tester import StackTester
from ..lab import interface
from ..lab.model.dut import flow2_scenarios
from ..lab.model.site import Site
from ..lab.protocol import Lab
from ..methods import registry, throughput
from ..report.results import headline
from ..store.db import Store
from ..trial.lab_tester import LabTester
from ..trial.warmup import warm_up
from . import estimate, looks
from .eta import Eta, ends_at, point_of
from .eta import text as eta_text
from .model import Campaign, Scenario
from .plan import ScheduledTest, design_record, planned, resuming, schedule, visits
from .recorder import Recorder

Progress = Callable[[str], None]


#: What a visit's lab build is made of: the lab up and down, and its table's warm-up.
BUILD_PHASES = ("lab up and down", "table warm-up")


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def run(site: Site, c: Campaign, store: Store, resume: bool, command: str, progress: Progress = _stderr,
        budget_s: float | None = None) -> int:
    """Runs (or resumes) ``c``; returns the run id. The points run in the
    order of :func:`.plan.schedule` (a resumed run: the order it
    recorded), one lab per visit of a scenario.

    The run holds the machine's lab lock from start to end: a second run
    (or any lab command) started meanwhile is refused before it reads or
    writes anything (:class:`LabError`). ``resume``: continue the newest
    unfinished run of this exact campaign; if it has none, only finished
    ones, that is an error; if it has no run at all (one killed before its
    first lab was up records none) a new run starts. ``budget_s``: a
    sequential run's time budget (campaign/looks.py; a resumed run keeps
    the one it recorded). A machine without what a scenario's lab needs
    installed (:func:`interface.check_machine`) is refused before the
    self-test.
    """
    check_budget(c, budget_s)
    for sc in c.scenarios:  # before the self-test: a missing VM image is found in a second, not after 30 s
        interface.check_machine(sc.lab, sc.dut)
    with exclusive(site, c):
        return _run(site, c, store, resume, command, progress, budget_s)


def check_budget(c: Campaign, budget_s: float | None) -> None:
    """A time budget needs a sequential design: it spends blocks beyond each test's own."""
    if budget_s is not None and not c.design.sequential:
        raise UsageError("a time budget spends blocks where comparisons are undecided: it needs [design] "
                         "sequential = true and max_blocks in the campaign file", "budget")


def exclusive(site: Site, c: Campaign):
    """The machine's lab lock, held for run ``c`` (a context manager):
    taken before the results database is opened, a second run is refused
    before it creates or changes anything (:class:`LabError`)."""
    return interface.lock(site, f"run {c.name}")


def _resumable(c: Campaign, store: Store, progress: Progress) -> int | None:
    run_id = store.resumable_run(c.sha256)
    if run_id is None:
        done = store.finished_run(c.sha256)
        if done is not None:
            raise UsageError(f"run {done} of {c.name} (this exact file) in {store.where} finished; "
                             f"run it without --resume to run it again", "resume")
        progress(f"no unfinished run of {c.name} (this exact file) in {store.where}: starting one")
    return run_id


def _order(c: Campaign, store: Store, run_id: int | None, progress: Progress,
           budget_s: float | None = None) -> tuple[list[ScheduledTest], dict[str, Any] | None]:
    """The run's order, and the design a new run records (None for a resumed run, which follows its own)."""
    if run_id is not None:
        plan = planned(c, store, run_id)
        progress(resuming(run_id, plan, store.done_points(run_id)))
        return plan, None
    seed = c.design.seed if c.design.seed is not None else secrets.randbelow(2 ** 31)
    plan = schedule(c, seed)
    design = {**design_record(c, seed, plan), **({"sequential": seq} if (seq := looks.record(c, budget_s)) else {})}
    progress(f"design: {design['order']} order, {design['blocks']} repetition block(s), seed {seed}"
             + (f", sequential: blocks added up to {c.design.max_blocks} until decided" if seq else ""))
    return plan, design


def _run(site: Site, c: Campaign, store: Store, resume: bool, command: str, progress: Progress,
         budget_s: float | None = None) -> int:
    run_id = _resumable(c, store, progress) if resume else None
    phases.reset()
    started = time.monotonic()
    with phases.phase("self-test"):
        sts = ensure_selftests(site, store, c, progress)
    plan, design = _order(c, store, run_id, progress, budget_s)
    record = _RunRecord(c, store, command, run_id, design, sts)
    planned_run = estimate.plan(c, estimate.history(store, selftest.machine()), 0)
    eta = Eta(estimate.point_seconds(planned_run), planned_run.build_s_by_scenario, estimate.unsearched(planned_run))
    sc_of = {x.name: x for x in c.scenarios}
    looker = looks.Looker(c, store, run_id, budget_s)
    try:
        for name, points in visits(plan, store.done_points(run_id) if run_id is not None else set()):
            points = [p for p in points if looker.runs(p, record.run_id)]
            if not points:  # a sequential design decided every test of this visit: no lab to build
                continue
            sc = sc_of[name]
            eta.visit_begins(sc.name)
            before = phases.totals()
            with phases.phase("lab up and down"), interface.for_trial(site, sc.lab, sc.dut) as lab:
                if lab.table_new:  # a table given for this visit: learned (its time recorded with the
                    with phases.phase("table warm-up"):  # run) and crossed once first (trial/warmup.py)
                        lab, line = warm_up(lab)
                    if line:
                        progress(line)
                run_id = record.visit(sc, lab)
                where = f" scenario {sc.name}:" if sc.name else ""
                progress(f"run {run_id}:{where} {c.name} on {interface.describe(lab)} → {store.where}")
                with phases.phase("between trials"):
                    run_points(c, store, run_id, _testers(site, lab, sts[sc.lab.cpu_arrangement]), progress,
                               points=points, eta=eta, plan=plan, lab_build=secrets.token_hex(4), looker=looker)
            record.lab_build(estimate.build_key(sc), phases.since(before, BUILD_PHASES))
        looker.finish()
    except KeyboardInterrupt:
        _finish(record, "interrupted", started)
        raise
    except Exception as e:
        _finish(record, "failed", started, f"{type(e).__name__}: {e}")
        raise
    assert record.run_id is not None, "a run without a visit has nothing to run"
    _finish(record, "finished", started)
    return record.run_id


def _finish(record: _RunRecord, status: str, started: float, error: str | None = None) -> None:
    """The run's status, and its time by phase (:mod:`..core.phases`) added to what earlier sessions of it
    recorded: ``environment.time_s``, ``wall`` and each phase [s]."""
    if record.run_id is None:
        return
    store = record.store
    env = store.run(record.run_id)["environment"]
    was = env.get("time_s") or {}
    now = {"wall": time.monotonic() - started, **phases.totals()}
    env["time_s"] = {k: round(was.get(k, 0.0) + now.get(k, 0.0), 3) for k in dict.fromkeys([*now, *was])}
    store.set_environment(record.run_id, env)
    store.finish_run(record.run_id, status, error)


class _RunRecord:
    """The run's row and environment: started at the first visit (a new
    run) or resumed there, each scenario's lab and DUT added at its first
    visit beside the first's."""

    def __init__(self, c: Campaign, store: Store, command: str, run_id: int | None, design: dict[str, Any] | None,
                 sts: dict[str | None, tuple[int, dict[str, Any]] | None]) -> None:
        self.c, self.store, self.command, self.run_id, self.design, self.sts = c, store, command, run_id, design, sts
        # The run's own record: the self-test of the campaign's [lab] arrangement (each scenario's is in its environment).
        st = sts.get(c.lab.cpu_arrangement, next(iter(sts.values())))
        self.st_id = st[0] if st else None
        self.resumed = False
        self.seen: set[str] = set()

    def lab_build(self, key: str, seconds: float) -> None:
        """Records a visit's lab, up and down, table loaded and warmed (campaign/estimate.History.builds_s)."""
        env = self.store.run(self.run_id)["environment"]
        env.setdefault("lab_builds_s", {}).setdefault(key, []).append(round(seconds, 3))
        self.store.set_environment(self.run_id, env)

    def visit(self, sc: Scenario, lab: Lab) -> int:
        sc_st = self.sts[sc.lab.cpu_arrangement]
        here = {**environment(lab), "selftest_id": sc_st[0] if sc_st else None}
        if self.run_id is None:
            env = {**here, "design": self.design, **({"scenarios": {sc.name: here}} if sc.name else {})}
            c = self.c
            self.run_id = self.store.start_run(c.name, self.command, env, self.st_id, c.path, c.sha256, c.text)
            self.resumed = True
        elif not self.resumed:
            self.store.resume_run(self.run_id, here, self.st_id)
            self.resumed = True
        if sc.name and sc.name not in self.seen:  # each scenario's lab and DUT beside the first's
            env = self.store.run(self.run_id)["environment"]
            env.setdefault("scenarios", {})[sc.name] = here
            self.store.set_environment(self.run_id, env)
        self.seen.add(sc.name)
        return self.run_id


def _testers(site: Site, lab: Lab, st: tuple[int, dict[str, Any]] | None) -> Callable[[ScheduledTest], Tester | HostTester]:
    """The tester of each point of a visit on ``lab``: the lab's frames, or the tester hosts' stacks. A reset
    may change the lab's state: the next point takes the lab as the last tester left it."""
    holder: dict[str, Any] = {"lab": lab}

    def make_tester(p: ScheduledTest) -> Tester | HostTester:
        if "tester" in holder:
            holder["lab"] = holder["tester"].lab
        if p.variant:
            return StackTester(site, holder["lab"])
        holder["tester"] = LabTester(site, holder["lab"], p.mix, p.frame_size, p.bidirectional,
                                     p.test.matrix.drain_s, st[1] if st else None, p.test.traffic,
                                     p.test.matrix.settle_s)
        return holder["tester"]

    return make_tester


def environment(lab: Lab) -> dict:
    """What produced the results: machine, lab, and the DUT as configured:
    in the emulated lab its rule sets, qdiscs, routes and links
    (:func:`configured.datapaths`); an external lab's file (hash, ports, DUT
    commands, the configuration file), the apply command's outcome and
    what the DUT's agent said of itself."""
    return {**selftest.machine(), "v6bench": __version__, "tools": {"iperf3": _iperf3_version()},
            "shared_machine": lab.shared_machine, "lab": {**interface.record(lab), "nodes": list(lab.nodes)},
            "dut": interface.dut_record(lab)}


def _iperf3_version() -> str | None:
    try:
        return iperf.version()
    except Exception:  # not installed: host-stack tests will say so when they run
        return None


def ensure_selftests(site: Site, store: Store, c: Campaign,
                     progress: Progress) -> dict[str | None, tuple[int, dict] | None]:
    """The self-tests the campaign's trials are checked against
    (:func:`selftest.ensure`), one per CPU arrangement its scenarios use:
    a scenario's trials are checked against the tester as it runs there."""
    sizes, mtu, arrangements = c.trial_frames
    return {arr: selftest.ensure(site, store, c.selftest_when, c.selftest_frame_sizes, sizes, mtu, arr, progress)
            for arr in arrangements}


def run_points(c: Campaign, store: Store, run_id: int, make_tester: Callable[[ScheduledTest], Tester | HostTester],
               progress: Progress, scenario: str | None = None, points: list[ScheduledTest] | None = None,
               eta: Eta | None = None, plan: list[ScheduledTest] | None = None,
               lab_build: str | None = None, looker: looks.Looker | None = None) -> dict[str, int]:
    """Runs the points of the run's order (:func:`.plan.planned`) not done yet in
    ``run_id``: all of them, those of ``scenario``, or ``points`` (one
    visit); returns counts. ``make_tester``: each point's tester (a lab's,
    or a simulation's in the tests); ``eta``: what this run measured so far
    (:mod:`.eta`: test times, lab bring-ups), added to; ``plan``: the run's
    order if the caller has it (else read from the run); ``lab_build``: the
    id of the lab these points run on, stored with each test (scenarios are
    compared build by build, report/builds.py); ``looker``: a sequential
    design's looks (:mod:`.looks`), which skip the points of a test already
    decided. The caller brings up the lab and marks the run finished,
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
        if looker is not None and not looker.runs(p, run_id):
            continue
        position = position_of[p.key]
        bar = "#" * round(20 * (position - 1) / len(plan))
        left_s = eta.left_s([q for q in plan[position - 1:] if q.key not in done])
        progress(f"[{bar:<20}] {position}/{len(plan)} {p.describe()}" + (f" · ETA {eta_text(left_s)}, ends about {ends_at(left_s)}" if left_s else ""))
        started = time.monotonic()
        try:
            result, rec = _run_point(store, run_id, p, sc_of[p.scenario], make_tester, lab_build)
        except Refused as e:  # stored failed with its reason (_run_point); the run goes on
            done.add(p.key)
            progress(f"    refused: {e} ({time.monotonic() - started:.0f} s)")
            continue
        took = time.monotonic() - started
        eta.test_took(p.test.index, took, point_of(p))
        done.add(p.key)
        replayed = f", {rec.replayed} trials replayed" if rec and rec.replayed else ""
        trials = f"{rec.seq} trials, " if rec else ""
        progress(f"    {headline(p.test.kind, result)} ({trials}{took:.0f} s{replayed})")
    return {"tests": len(plan), "ran": len(todo)}


def _start_test(store: Store, run_id: int, p: ScheduledTest, sc: Scenario,
                lab_build: str | None) -> tuple[int, list[dict[str, Any]]]:
    """The point's test row and the trials an interrupted attempt recorded: an interrupted attempt (a kill,
    Ctrl-C, a failure) is continued in its own row, one row per test."""
    test_id = store.unfinished_attempt(run_id, p.key)
    if test_id:
        replay = store.trials(test_id)
        store.restart_test(test_id)
        return test_id, replay
    params = {"params": p.test.params.__dict__, "throughput_search": p.test.throughput_search.__dict__,
              "drain_s": p.test.matrix.drain_s, **p.test.traffic.to_json(), "variant": dict(p.variant),
              **({"settle_s": p.test.matrix.settle_s} if p.test.matrix.settle_s is not None else {}),
              **({"scenario": p.scenario} if p.scenario else {}),
              **({"lab_build": lab_build} if lab_build else {}),
              **({"control_of": sc.control_of} if sc.control_of else {}),
              **({"compare_with": sc.compare_with} if sc.compare_with else {}),
              **({"flow2": f2} if (f2 := flow2_scenarios(sc.dut, p.test.traffic)) else {}),
              **({"flow2_dut": sorted(str(v) for v in d2)} if (d2 := sc.dut.on_flow2()) else {})}
    return store.start_test(run_id, p.key, p.test.kind, str(p.mix), p.frame_size, p.bidirectional,
                            p.repetition, params), []


def _run_point(store: Store, run_id: int, p: ScheduledTest, sc: Scenario,
               make_tester: Callable[[ScheduledTest], Tester | HostTester],
               lab_build: str | None) -> tuple[dict[str, Any], Recorder | None]:
    """Measures one point and stores its test's outcome; its result, and the recorder of its trials (None for a
    host-stack test, which stores no trials)."""
    test_id, replay = _start_test(store, run_id, p, sc, lab_build)
    k = registry.kind(p.test.kind)
    rec = None
    try:
        if not k.sends_frames:
            result = k.procedure(make_tester(p), p.test.params, 4 if p.mix.ipv4_pct else 6, dict(p.variant))
        else:
            rec = Recorder(make_tester(p), store, test_id, replay)
            point = registry.Point(p.frame_size, sc.lab.link_speed_bps, *known_ndr(store, run_id, p),
                                   neighbour=neighbour(store, run_id, p))
            result = registry.run(k, rec, p.test.params, point, p.test.throughput_search)
    except KeyboardInterrupt:
        store.finish_test(test_id, "interrupted")
        raise
    except Exception as e:
        store.finish_test(test_id, "failed", error=f"{type(e).__name__}: {e}")
        raise
    store.finish_test(test_id, "done", result)
    return result, rec


def neighbour(store: Store, run_id: int, p: ScheduledTest) -> throughput.Neighbour | None:
    """Where a throughput search with ``start = "neighbour"`` starts: what a
    throughput test of ``p``'s mix, direction, traffic and scenario found
    earlier in the run at the nearest other frame size (the newest of
    those), None for any other test or when there is none. Never the
    same frame size: a repetition does not start from another, so the
    repetitions of a point stay independent."""
    if p.test.kind != "throughput" or getattr(p.test.params, "start", "line") != "neighbour":
        return None
    found = [(abs(size - p.frame_size), n, size, r) for n, (size, r) in enumerate(store.test_results(
        run_id, "throughput", str(p.mix), p.bidirectional, {**p.test.traffic.frames_json(), "scenario": p.scenario or None}))
        if size != p.frame_size and r.get("ndr_fps")]
    if not found:
        return None
    _, _, size, r = min(found, key=lambda x: x[:2])
    return throughput.Neighbour(r["ndr_fps"], r.get("pdr_fps"), f"{p.mix} at {size} B, earlier in this run")


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
