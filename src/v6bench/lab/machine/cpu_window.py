"""The DUT's CPU over a trial's traffic window, not over the whole engine
run (start-up, learning, settle and drain included).

While the engine runs, a sampler thread (pinned to the tester's receive
CPU, off the DUT's) reads every :data:`INTERVAL_S` the run time of the
routers' NAPI threads (``/proc/PID/schedstat``, ns) and the busy time of
the DUT's CPUs: the wall time less their idle and I/O-wait time from
``/proc/stat``. (Not its user, system and softirq fields: those are
sampled by the scheduler tick, which a CPU that wakes for tens of µs
between stopped ticks escapes; the idle time of a tickless CPU is
measured at every idle exit.) Steal time (the hypervisor's) counts busy. Afterwards each
cumulative series is interpolated linearly at the traffic's first and
last frame (the engine's ``started_at_unix_ns`` and ``traffic_s``): the
error at each end is at most the work of one interval's change of pace,
under 1 % of a 1-s trial at 20 ms.

The two readings are independent: the threads' own accounting, and the
CPU's. With the DUT on CPUs of its own (``split``) they agree; a netns test
checks that (tests/netns/test_cpu_window.py).
"""

from __future__ import annotations

from functools import partial
from typing import Any, Callable

import bisect
import os
import threading
import time

from . import napi

INTERVAL_S = 0.02
#: A bound on the samples one trial keeps (a day at 20 ms); the sampler stops taking more.
MAX_SAMPLES = 5_000_000
_TICK_NS = 1e9 / os.sysconf("SC_CLK_TCK")

#: One sample: its time [ns, CLOCK_REALTIME], each thread's run time [ns] (None: unread), each CPU's busy time [ns].
Sample = tuple[int, dict[int, int | None], dict[int, float]]


def cpu_idle_ns(cpus: list[int]) -> dict[int, float]:
    """Idle (and I/O wait) time of each CPU since boot [ns] from ``/proc/stat``."""
    out = {}
    want = {f"cpu{c}": c for c in cpus}
    with open("/proc/stat") as f:
        for line in f:
            name, *fields = line.split()
            if name in want:
                out[want[name]] = (int(fields[3]) + int(fields[4])) * _TICK_NS
    return out


class Sampler:
    """Samples ``pids``' run time and ``cpus``' busy time until closed;
    ``pin``: the CPU the sampling thread runs on."""

    def __init__(self, pids: list[int], cpus: list[int], pin: int | None, interval_s: float = INTERVAL_S) -> None:
        self.pids, self.cpus, self.pin, self.interval_s = pids, cpus, pin, interval_s
        self.samples: list[Sample] = []
        self.times: list[int] = []  # the samples' times, for bisection
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="cpu-sampler", daemon=True)

    def _take(self) -> None:
        now = time.time_ns()
        self.samples.append((now, {p: napi.cpu_time_ns(p) for p in self.pids},
                             {c: now - idle for c, idle in cpu_idle_ns(self.cpus).items()}))
        self.times.append(now)

    def _loop(self) -> None:
        if self.pin is not None:
            os.sched_setaffinity(0, {self.pin})  # this thread only
        while len(self.samples) < MAX_SAMPLES:
            self._take()
            if self._stop.wait(self.interval_s):
                break
        self._take()

    def __enter__(self) -> "Sampler":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _at(self, t_ns: int, value: Callable[[Sample], float | None]) -> float | None:
        """A cumulative series (``value(sample)``) interpolated at ``t_ns``; None outside the samples."""
        s = self.samples
        i = bisect.bisect_left(self.times, t_ns)
        if not s or i >= len(s) or (i == 0 and s[0][0] != t_ns):
            return None
        if s[i][0] == t_ns:
            return value(s[i])
        (ta, va), (tb, vb) = (s[i - 1][0], value(s[i - 1])), (s[i][0], value(s[i]))
        if va is None or vb is None:
            return None
        return va + (vb - va) * (t_ns - ta) / (tb - ta)

    def steps(self, start_ns: int, end_ns: int) -> list[tuple[int, int, int | None]]:
        """The threads' summed run time between consecutive samples inside
        ``start_ns`` … ``end_ns``: ``(from_ns, to_ns, busy_ns)`` each, busy
        None where a thread was unread (lab/machine/cost.runs_work)."""
        inside = [s for s in self.samples if start_ns <= s[0] <= end_ns]
        out = []
        for (ta, a, _), (tb, b, _) in zip(inside, inside[1:]):
            busy = [(a.get(p), b.get(p)) for p in self.pids]
            out.append((ta, tb, sum(y - x for x, y in busy if x is not None and y is not None)
                        if all(x is not None and y is not None for x, y in busy) else None))
        return out

    def window(self, start_ns: int, end_ns: int) -> dict[str, Any] | None:
        """Busy time [ns] of each thread and each CPU between ``start_ns`` and
        ``end_ns`` (CLOCK_REALTIME): ``{"window_ns", "threads": {pid: ns|None},
        "cpus": {cpu: ns|None}}``; None if the samples do not cover the window."""
        if end_ns <= start_ns or not self.samples:
            return None

        def delta(value: Callable[[Sample], float | None]) -> float | None:
            a, b = self._at(start_ns, value), self._at(end_ns, value)
            return None if a is None or b is None else b - a

        return {"window_ns": end_ns - start_ns,
                "threads": {p: delta(partial(_thread_ns, p)) for p in self.pids},
                "cpus": {c: delta(partial(_cpu_ns, c)) for c in self.cpus},
                "samples": len(self.samples), "interval_s": self.interval_s}


def _thread_ns(pid: int, sample: Sample) -> float | None:
    """Thread ``pid``'s run time in ``sample``."""
    return sample[1].get(pid)


def _cpu_ns(cpu: int, sample: Sample) -> float | None:
    """CPU ``cpu``'s busy time in ``sample``."""
    return sample[2].get(cpu)
