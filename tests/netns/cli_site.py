"""The v6bench command line on a lab site of the tests' own (run directory
and namespace prefix), so a user's lab is never touched; and the check
that a test leaves no namespace or engine process behind."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PREFIX = f"v6l{os.getpid() % 10000}-"
RUN_DIR = Path(f"/run/v6bench-test-{os.getpid()}")
ENV = {**os.environ, "V6BENCH_RUN_DIR": str(RUN_DIR), "V6BENCH_NETNS_PREFIX": PREFIX}


def v6bench(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "v6bench.cli", *args], env=ENV, capture_output=True, text=True,
                          timeout=timeout)


def namespaces() -> list[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
    return [n for n in out if n.startswith(PREFIX)]


def engine_processes() -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
                if "(v6bench-engine)" in stat and stat.rsplit(")", 1)[1].split()[0] != "Z":  # zombies are dead
                    pids.append(int(entry))
            except OSError:
                pass
    return pids


@pytest.fixture
def clean_site():
    engines_before = set(engine_processes())
    yield
    left = namespaces()
    if left:
        v6bench("lab", "down")
    assert not left, f"namespaces left behind: {left}"
    assert not set(engine_processes()) - engines_before, "an engine process was left running"


@pytest.fixture(scope="module")
def remove_run_dir():
    yield
    shutil.rmtree(RUN_DIR, ignore_errors=True)
