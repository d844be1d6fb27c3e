"""A killed test session's namespaces, processes and run directory are
removed by the next session (stale.py)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

import stale

pytestmark = pytest.mark.netns


def _dead_pid() -> int:
    """A pid no process has, and no live pytest shares modulo 10,000."""
    alive = stale._pytest_pids()
    return next(p for p in range(4_000_000, 4_100_000)
                if not Path(f"/proc/{p}").exists() and p % 10_000 not in {a % 10_000 for a in alive}
                and p % 1_000 not in {a % 1_000 for a in alive})


def test_a_dead_session_s_namespaces_processes_and_run_directory_are_removed():
    pid = _dead_pid()
    run_dir = Path(f"/run/v6bench-test-{pid}")
    lab_ns, fixture_ns = f"v6l{pid % 10_000}-t1", f"v6bt{pid % 10_000}x0r1"
    sleeper = None
    try:
        run_dir.mkdir()
        (run_dir / "lock").touch()
        for ns in (lab_ns, fixture_ns):
            subprocess.run(["ip", "netns", "add", ns], check=True)
        sleeper = subprocess.Popen(["ip", "netns", "exec", fixture_ns, "sleep", "300"])
        subprocess.run(["ip", "netns", "exec", fixture_ns, "true"], check=True)

        removed = stale.sweep()

        listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
        assert lab_ns not in listed and fixture_ns not in listed
        assert fixture_ns in removed
        assert not run_dir.exists()
        assert sleeper.wait(timeout=10) != 0, "the process inside the stale namespace was not stopped"
    finally:
        if sleeper and sleeper.poll() is None:
            sleeper.kill()
        for ns in (lab_ns, fixture_ns):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        subprocess.run(["rm", "-rf", str(run_dir)])


def test_a_live_session_s_namespaces_are_kept(router_lab):
    assert os.getpid() in stale._pytest_pids()
    assert router_lab.r1 not in stale.stale_namespaces(stale._pytest_pids())
    stale.sweep()
    assert router_lab.r1 in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
