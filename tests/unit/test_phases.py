"""Where a run's time goes (core/phases.py, report/views/time.py): each
second counted once, to the innermost phase; the engine's run split by its
own account; nothing counted twice. The clock is a fake: nothing is timed."""

import threading

import pytest

from v6bench.core import phases
from v6bench.report import data
from v6bench.report.views.time import time_by_phase


@pytest.fixture
def clock(monkeypatch):
    now = [100.0]
    monkeypatch.setattr(phases.time, "monotonic", lambda: now[0])
    phases.reset()
    yield now
    phases.reset()


def test_nested_phases_pause_the_outer_one_and_split_moves_what_the_engine_measured(clock):
    with phases.phase("lab up and down"):
        clock[0] += 3.0                     # bring-up
        with phases.phase("between trials"):
            clock[0] += 0.5
            with phases.phase("engine start and stop"):
                clock[0] += 4.0
            phases.split("engine start and stop", {"traffic": 2.0, "drain": 1.0, "learning and settle": 0.6})
            clock[0] += 0.25
        clock[0] += 1.0                     # take-down
    assert phases.totals() == {"lab up and down": 4.0, "between trials": 0.75, "engine start and stop": 0.4,
                               "learning and settle": 0.6, "traffic": 2.0, "drain": 1.0}
    assert sum(phases.totals().values()) == pytest.approx(8.75)


def test_an_opaque_phase_keeps_its_trials_and_other_threads_count_nothing(clock):
    with phases.phase("self-test"):
        with phases.phase("engine start and stop"):
            clock[0] += 5.0
        phases.split("engine start and stop", {"traffic": 4.0})
    worker = threading.Thread(target=lambda: phases.phase("traffic").__enter__())
    worker.start()
    worker.join()
    assert phases.totals() == {"self-test": 5.0}
    with pytest.raises(ValueError, match="not one of"):
        with phases.phase("coffee"):
            pass


def test_the_report_shows_the_wall_time_by_phase_and_the_rest():
    run = data.RunData({"environment": {"time_s": {"wall": 100.0, "traffic": 40.0, "lab up and down": 30.0,
                                                   "drain": 10.0}}}, None, (), 0)
    section = time_by_phase(run)
    [table] = [b for b in section.blocks if getattr(b, "rows", None)]
    assert table.rows == (("lab up and down", 30.0, 30.0), ("traffic", 40.0, 40.0), ("drain", 10.0, 10.0),
                          ("outside every phase", 20.0, 20.0))
    assert time_by_phase(data.RunData({"environment": {}}, None, (), 0)) is None


def test_a_resumed_run_adds_each_sessions_time(tmp_path, clock):
    from v6bench.campaign import runner
    from v6bench.store.db import Store

    store = Store(tmp_path / "r.db")
    rid = store.start_run("c", "test", {"time_s": {"wall": 10.0, "traffic": 4.0}}, None, "c.toml", "x", "")

    class Record:
        run_id = rid

    Record.store = store
    with phases.phase("traffic"):
        clock[0] += 3.0
    clock[0] += 1.0
    runner._finish(Record, "finished", 100.0)
    assert store.run(rid)["environment"]["time_s"] == {"wall": 14.0, "traffic": 7.0}
    assert store.run(rid)["status"] == "finished"


def test_a_host_stack_run_is_its_own_phase_not_time_between_trials(clock, monkeypatch):
    """kannan-throughput's iperf3 runs showed as 100 % "between trials": the run itself is counted apart."""
    from contextlib import contextmanager
    from types import SimpleNamespace
    from v6bench.host import stack_tester

    @contextmanager
    def stacks(site, lab):
        yield {"routed": None}

    def iperf_run(*args):
        clock[0] += 10.0
        return {"received_bps": 1.0}
    monkeypatch.setattr(stack_tester, "kernel_stacks", stacks)
    monkeypatch.setattr(stack_tester.iperf, "run", iperf_run)
    t = object.__new__(stack_tester.StackTester)
    t.site, t.lab, t.client_cpu, t.server_cpu = None, SimpleNamespace(topology="p2p"), 0, 0
    t.path = SimpleNamespace(problem=lambda version, size: None)
    with phases.phase("between trials"):
        clock[0] += 0.5
        t.stream(4, "tcp", 128, 10.0)
    assert phases.totals() == {"between trials": 0.5, "host-stack runs": 10.0}
