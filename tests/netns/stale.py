"""What a killed test session left behind, removed by the next one.

Every root test names its namespaces after its pytest process
(``v6l<pid>-`` for the command line's labs, ``v6bt<pid>x`` for the
fixtures' labs, ``v6s<pid>-`` for the sender tests, ``v6e/v6g/v6x<pid>`` for
the external routers; the pid modulo 10,000 or 1,000). A session that is
SIGKILLed (a CI timeout, a killed terminal) cannot remove them, and the
next session, another pid, would never look at them. :func:`sweep` runs at
the start of every root session and removes the namespaces (and the
processes inside them) and run directories of test sessions whose pytest
is no longer alive. A command-line lab is removed by ``v6bench lab down``
on its own run directory and prefix: the product's own recovery, which
also stops its engine, VM and translator.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

#: A test namespace's owner: its pid modulo ``MODULI[kind]``.
PATTERN = re.compile(r"^(?P<kind>v6l|v6bt|v6s|v6e|v6g|v6x)(?P<n>\d+)")
MODULI = {"v6l": 10_000, "v6bt": 10_000, "v6s": 1_000, "v6e": 10_000, "v6g": 10_000, "v6x": 10_000}
RUN_DIRS = re.compile(r"^v6bench-(test|senders)-(?P<pid>\d+)$")


def _pytest_pids() -> set[int]:
    pids = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if b"pytest" in Path(f"/proc/{entry}/cmdline").read_bytes():
                    pids.add(int(entry))
            except OSError:
                pass
    return pids


def _sh(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(list(args), capture_output=True, text=True, timeout=120, env=env)


def stale_namespaces(alive: set[int]) -> list[str]:
    """Test namespaces whose pid (modulo) is no live pytest process's."""
    out = []
    for ns in _sh("ip", "netns", "list").stdout.split():
        m = PATTERN.match(ns)
        if m and int(m["n"]) not in {p % MODULI[m["kind"]] for p in alive}:
            out.append(ns)
    return out


def sweep() -> list[str]:
    """Remove what dead test sessions left; returns the namespaces removed."""
    alive = _pytest_pids()
    for d in Path("/run").iterdir():
        m = RUN_DIRS.match(d.name)
        if not m or int(m["pid"]) in alive:
            continue
        if m[1] == "test":
            env = {**os.environ, "V6BENCH_RUN_DIR": str(d), "V6BENCH_NETNS_PREFIX": f"v6l{int(m['pid']) % 10_000}-"}
            _sh(sys.executable, "-m", "v6bench.cli", "lab", "down", env=env)
        shutil.rmtree(d, ignore_errors=True)
        shutil.rmtree(f"/tmp/v6bench-test-{m['pid']}", ignore_errors=True)
    left = stale_namespaces(alive)
    for ns in left:
        for pid in _sh("ip", "netns", "pids", ns).stdout.split():
            try:
                os.kill(int(pid), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass
        _sh("ip", "netns", "del", ns)
    return left
