"""The tester host that is this machine (:class:`Local`): the engine
binary run as a child process, the spec on its standard input, its
result on its standard output; and the engine's local tools (the binary,
a crashed caller's engine stopped, frames written to a pcap)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

from .. import stopping
from .spec import TrialSpec
from .tester_host import EngineError

#: How often a wait for the engine looks for a stop request (:func:`stopping.check`), in seconds.
WAIT_SLICE_S = 0.5

_REPO_BINARY = Path(__file__).resolve().parents[3] / "engine" / "target" / "release" / "v6bench-engine"


class Local:
    """The engine on this machine, a child process a command (:class:`~.tester_host.TesterHost`)."""

    name = "local"

    def run(self, command: str, spec: dict[str, Any], timeout_s: float | None,
            pid_file: Path | None) -> dict[str, Any]:
        proc = subprocess.Popen([str(binary()), command], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        if pid_file is not None:
            pid_file.write_text(f"{proc.pid} {process_start_ticks(proc.pid)}\n")
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        try:
            given: str | None = json.dumps(spec)
            while True:  # in slices, so that a stop whose KeyboardInterrupt Python lost is still seen
                stopping.check()
                left_s = None if deadline is None else deadline - time.monotonic()
                try:
                    out, err = proc.communicate(given, timeout=WAIT_SLICE_S if left_s is None
                                                else max(0.0, min(WAIT_SLICE_S, left_s)))
                    break
                except subprocess.TimeoutExpired:
                    given = None  # the spec went with the first call
                    if left_s is not None and left_s <= WAIT_SLICE_S:
                        raise
        except BaseException:
            # Ctrl-C, timeout: let the engine stop its senders, then make sure it is gone.
            proc.send_signal(signal.SIGINT)
            try:
                proc.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()
            raise
        finally:
            if pid_file is not None and proc.poll() is not None:
                pid_file.unlink(missing_ok=True)
        if proc.returncode not in (0, 130):
            raise EngineError(_stderr_line(err), proc.returncode)
        result: dict[str, Any] = json.loads(out)
        return result

    def version(self) -> dict[str, Any]:
        proc = subprocess.run([str(binary()), "version"], capture_output=True, text=True, timeout=30)
        if proc.returncode != 0:
            raise EngineError(_stderr_line(proc.stderr), proc.returncode)
        result: dict[str, Any] = json.loads(proc.stdout)
        return result

    def program_sha256(self) -> str | None:
        try:
            return hashlib.sha256(binary().read_bytes()).hexdigest()
        except (OSError, EngineError):
            return None

    def stop_recorded(self, pid_file: Path) -> int | None:
        return kill_recorded(pid_file)


def binary() -> Path:
    """The engine binary: ``$V6BENCH_ENGINE``, the repository build, or PATH."""
    env = os.environ.get("V6BENCH_ENGINE")
    if env:
        return Path(env)
    if _REPO_BINARY.exists():
        return _REPO_BINARY
    found = shutil.which("v6bench-engine")
    if found:
        return Path(found)
    raise EngineError("the engine binary was not found: run `make` or set V6BENCH_ENGINE", 1)


def _stderr_line(stderr: str) -> str:
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    return lines[-1].removeprefix("v6bench-engine: error: ") if lines else "no message"


def process_start_ticks(pid: int) -> int | None:
    """The start time of ``pid`` in clock ticks since boot (``/proc/PID/stat``
    field 22): with the PID it names one process, even after PID reuse."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[19])


def kill_recorded(pid_file: Path) -> int | None:
    """Kills the engine recorded in ``pid_file`` by :meth:`Local.run` if that
    very process still runs (a crashed caller's engine); removes the file.
    Returns the PID killed, if any."""
    try:
        pid_text, ticks_text = pid_file.read_text().split()
        pid, ticks = int(pid_text), int(ticks_text)
    except (OSError, ValueError):
        return None
    killed = None
    try:
        comm = Path(f"/proc/{pid}/comm").read_text().strip()
        if comm == "v6bench-engine" and process_start_ticks(pid) == ticks:
            os.kill(pid, signal.SIGKILL)
            killed = pid
    except OSError:
        pass
    pid_file.unlink(missing_ok=True)
    return killed


def write_frames(spec: TrialSpec | dict[str, Any], out: Path, count: int = 10, timestamp_ns: int = 0) -> None:
    """Writes the first ``count`` frames of every sending port to a pcap (the engine's ``frames`` command)."""
    if isinstance(spec, TrialSpec):
        spec = spec.to_json()
    proc = subprocess.run(
        [str(binary()), "frames", "--spec", "-", "--out", str(out), "--count", str(count), "--timestamp-ns", str(timestamp_ns)],
        input=json.dumps(spec),
        capture_output=True,
        text=True,
        timeout=60,
    )
    if proc.returncode != 0:
        raise EngineError(_stderr_line(proc.stderr), proc.returncode)
