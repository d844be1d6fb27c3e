"""Runs the packet engine: trial spec in, trial result (dict) out.

The engine binary and its JSON contract are documented in
``docs/engine-spec.md``. This module only locates the binary, passes the
spec on stdin, checks the result's version (:mod:`.result`) and maps the
engine's exit status to exceptions; it never touches packets.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

from .. import stopping
from . import result as result_types
from .spec import TrialSpec

#: How often a wait for the engine looks for a stop request (:func:`stopping.check`), in seconds.
WAIT_SLICE_S = 0.5

_REPO_BINARY = Path(__file__).resolve().parents[3] / "engine" / "target" / "release" / "v6bench-engine"


class EngineError(RuntimeError):
    """The engine refused the spec (``bad_input``) or could not run the trial."""

    def __init__(self, message: str, exit_status: int):
        super().__init__(message)
        self.exit_status = exit_status

    @property
    def bad_input(self) -> bool:
        return self.exit_status == 2


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
    """Kills the engine recorded in ``pid_file`` by :func:`run_trial` if that
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


def run_rr(spec: dict, pid_file: Path | None = None) -> dict:
    """Runs ``v6bench-engine rr`` (UDP request/response between two
    namespaces' own stacks, ``engine/src/rr.rs``) and returns its result.
    The engine stops the exchanges itself at ``duration_s`` after at most
    3 s of warm-up; the time-out here is a safety net above that."""
    timeout_s = float(spec["duration_s"]) + 3 + 2 * float(spec.get("timeout_ms", 100)) / 1000 + 15
    return run_trial(spec, timeout_s, pid_file, command="rr")


def run_trial(spec: TrialSpec | dict, timeout_s: float | None = None, pid_file: Path | None = None,
              command: str = "run") -> dict:
    """Runs one trial and returns the parsed result.

    The engine bounds every trial itself; ``timeout_s`` is a safety net that
    defaults to that bound (traffic × 1.1 + 1 s + drain + learning + margin)
    when the spec gives ``duration_s``, and to none for ``frame_count``. A
    trial the engine marks interrupted (exit 130) still returns its result.
    Raises :class:`EngineError` on refusal or failure, or on a trial
    result of another version (:mod:`.result`; ``rr`` results are not
    trial results). ``spec``: a :class:`TrialSpec`, or its JSON as a dict
    (benchmarks and tests that ask what no trial of v6bench asks). With ``pid_file``,
    the engine's PID and start time are recorded there while it runs, so
    whoever cleans up after a crash of this process can stop it
    (:func:`kill_recorded`).
    """
    if isinstance(spec, TrialSpec):
        spec = spec.to_json()
    if timeout_s is None and spec.get("duration_s") is not None:
        learning = spec.get("learning", {})
        timeout_s = (
            float(spec["duration_s"]) * 1.1
            + 1
            + float(spec.get("drain_s", 2))
            + float(learning.get("timeout_s", 3))
            + float(learning.get("settle_s", 0.5))
            + 15
        )
    proc = subprocess.Popen(
        [str(binary()), command],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    if pid_file is not None:
        pid_file.write_text(f"{proc.pid} {process_start_ticks(proc.pid)}\n")
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    try:
        given = json.dumps(spec)
        while True:  # in slices, so that a stop whose KeyboardInterrupt Python lost is still seen
            stopping.check()
            left_s = None if deadline is None else deadline - time.monotonic()
            try:
                out, err = proc.communicate(given, timeout=WAIT_SLICE_S if left_s is None else max(0.0, min(WAIT_SLICE_S, left_s)))
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
    result = json.loads(out)
    why = result_types.problem(result) if command == "run" else None
    if why:
        raise EngineError(f"the engine's trial result is not one this v6bench reads: {why}", 1)
    return result


def version() -> dict:
    """The engine's ``{"engine_version", "spec_version", "result_version"}``."""
    proc = subprocess.run([str(binary()), "version"], capture_output=True, text=True, timeout=30)
    if proc.returncode != 0:
        raise EngineError(_stderr_line(proc.stderr), proc.returncode)
    return json.loads(proc.stdout)


def write_frames(spec: TrialSpec | dict, out: Path, count: int = 10, timestamp_ns: int = 0) -> None:
    """Writes the first ``count`` frames of every sending port to a pcap."""
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
