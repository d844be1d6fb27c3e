"""A campaign run from start to end: the self-test it needs, the lab, the
run record in the results database, the matrix, and the run's final
status (``finished``, ``interrupted`` on Ctrl-C, ``failed`` on an error).
``v6bench test KIND`` is a campaign of one test built from the options.
"""

from __future__ import annotations

import secrets
import sys
from typing import Callable

from .. import __version__, selftest
from ..core.errors import UsageError
from ..lab import interface
from ..lab.emulated import state
from ..lab.model.site import Site
from ..lab.interface import Lab
from ..store.db import Store
from ..host import iperf
from ..host.stack_tester import StackTester
from ..trial.lab_tester import LabTester
from ..trial.warmup import warm_up
from . import runner
from .eta import Eta
from .spec import Campaign


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
                     progress: Callable[[str], None]) -> dict[str | None, tuple[int, dict] | None]:
    """The self-tests the campaign's trials are checked against
    (:func:`selftest.ensure`), one per CPU arrangement its scenarios use:
    a scenario's trials are checked against the tester as it runs there."""
    sizes = tuple(fs for t in c.tests for fs in t.matrix.frame_sizes)
    mtu = max(sc.lab.mtu.largest for sc in c.scenarios)
    return {arr: selftest.ensure(site, store, c.selftest_when, c.selftest_frame_sizes, sizes, mtu, arr, progress)
            for arr in dict.fromkeys(sc.lab.cpu_arrangement for sc in c.scenarios)}


def run(site: Site, c: Campaign, store: Store, resume: bool, command: str,
        progress: Callable[[str], None] = lambda s: print(s, file=sys.stderr, flush=True)) -> int:
    """Runs (or resumes) ``c``; returns the run id. The points run in the
    order of :func:`runner.schedule` (a resumed run: the order it
    recorded), one lab per visit of a scenario.

    The run holds the machine's lab lock from start to end: a second run
    (or any lab command) started meanwhile is refused before it reads or
    writes anything (:class:`LabError`). ``resume``: continue the newest
    unfinished run of this exact campaign; if it has none, only finished
    ones, that is an error; if it has no run at all (one killed before its
    first lab was up records none) a new run starts.
    """
    with exclusive(site, c):
        return _run(site, c, store, resume, command, progress)


def exclusive(site: Site, c: Campaign):
    """The machine's lab lock, held for run ``c`` (a context manager):
    taken before the results database is opened, a second run is refused
    before it creates or changes anything (:class:`LabError`)."""
    return state.locked(site, f"run {c.name}")


def _resumable(c: Campaign, store: Store, progress: Callable[[str], None]) -> int | None:
    run_id = store.resumable_run(c.sha256)
    if run_id is None:
        done = store.finished_run(c.sha256)
        if done is not None:
            raise UsageError(f"run {done} of {c.name} (this exact file) in {store.where} finished; "
                             f"run it without --resume to run it again", "resume")
        progress(f"no unfinished run of {c.name} (this exact file) in {store.where}: starting one")
    return run_id


def _run(site: Site, c: Campaign, store: Store, resume: bool, command: str, progress: Callable[[str], None]) -> int:
    run_id = _resumable(c, store, progress) if resume else None
    sts = ensure_selftests(site, store, c, progress)
    # The run's own record: the self-test of the campaign's [lab] arrangement (each scenario's is in its environment).
    st = sts.get(c.lab.cpu_arrangement, next(iter(sts.values())))
    if run_id is None:
        seed = c.design.seed if c.design.seed is not None else secrets.randbelow(2 ** 31)
        plan = runner.schedule(c, seed)
        design = runner.design_record(c, seed, plan)
        progress(f"design: {design['order']} order, {design['blocks']} repetition block(s), seed {seed}")
    else:
        plan = runner.planned(c, store, run_id)
        progress(runner.resuming(run_id, plan, store.done_points(run_id)))
    resumed = False
    seen: set[str] = set()
    eta = Eta()
    sc_of = {x.name: x for x in c.scenarios}
    try:
        for name, points in runner.visits(plan, store.done_points(run_id) if run_id is not None else set()):
            sc = sc_of[name]
            eta.visit_begins()
            with interface.for_trial(site, sc.lab, sc.dut) as lab:
                if lab.table_new:  # a table given for this visit: learned (its time recorded with the
                    lab, line = warm_up(lab)  # run) and crossed once first (trial/warmup.py)
                    if line:
                        progress(line)
                sc_st = sts[sc.lab.cpu_arrangement]
                here = {**environment(lab), "selftest_id": sc_st[0] if sc_st else None}
                if run_id is None:
                    env = {**here, "design": design, **({"scenarios": {sc.name: here}} if sc.name else {})}
                    run_id = store.start_run(c.name, command, env, st[0] if st else None, c.path, c.sha256, c.text)
                    resumed = True
                elif not resumed:
                    store.resume_run(run_id, here, st[0] if st else None)
                    resumed = True
                if sc.name and sc.name not in seen:  # each scenario's lab and DUT beside the first's
                    env = store.run(run_id)["environment"]
                    env.setdefault("scenarios", {})[sc.name] = here
                    store.set_environment(run_id, env)
                seen.add(sc.name)
                where = f" scenario {sc.name}:" if sc.name else ""
                progress(f"run {run_id}:{where} {c.name} on {interface.describe(lab)} → {store.where}")
                _run_visit(site, c, store, run_id, lab, sc_st, progress, points, eta, plan)
    except KeyboardInterrupt:
        if run_id is not None:
            store.finish_run(run_id, "interrupted")
        raise
    except Exception as e:
        if run_id is not None:
            store.finish_run(run_id, "failed", f"{type(e).__name__}: {e}")
        raise
    store.finish_run(run_id, "finished")
    return run_id


def _run_visit(site: Site, c: Campaign, store: Store, run_id: int, lab: Lab, st: tuple[int, dict] | None,
               progress: Callable[[str], None], points: list[runner.ScheduledTest], eta: Eta,
               plan: list[runner.ScheduledTest]) -> None:
    holder = {"lab": lab}

    def make_tester(p: runner.ScheduledTest) -> LabTester | StackTester:
        if "tester" in holder:  # a reset may have changed the lab's state
            holder["lab"] = holder["tester"].lab
        if p.variant:
            return StackTester(site, holder["lab"])
        holder["tester"] = LabTester(site, holder["lab"], p.mix, p.frame_size, p.bidirectional,
                                     p.test.matrix.drain_s, st[1] if st else None, p.test.traffic,
                                     p.test.matrix.settle_s)
        return holder["tester"]

    runner.run(c, store, run_id, make_tester, progress, points=points, eta=eta, plan=plan)
