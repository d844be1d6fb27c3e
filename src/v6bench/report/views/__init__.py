"""The report's views, in the order the report shows them: each builds one
:class:`~v6bench.report.model.Section` from a run's results, or None when
the run has nothing it can draw."""

from __future__ import annotations

from typing import Callable

from ..data import RunData
from ..model import Section
from . import compare, connections, environment, events, fib, host, latency, load, throughput, time

VIEWS: dict[str, Callable[[RunData], Section | None]] = {
    "statistics": compare.comparisons,
    "throughput": throughput.throughput,
    "relative": throughput.relative,
    "load": load.load_views,
    "cpu": load.cpu_at_throughput,
    "cpu-rate": load.cpu_by_rate,
    "latency": latency.latency,
    "fib-scale": fib.fib_scale,
    "delay": latency.delay_histograms,
    "reset": events.reset,
    "bursts": events.bursts_and_recovery,
    "connections": connections.connections,
    "host": host.host_stack,
    "mesh": host.mesh,
    "time": time.time_by_phase,
    "environment": environment.environment,
}


def sections(data: RunData) -> list[Section]:
    return [s for view in VIEWS.values() if (s := view(data)) is not None]
