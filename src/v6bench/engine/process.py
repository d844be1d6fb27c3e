"""Runs the engine's trials on the tester host: trial spec in, trial
result (dict) out.

The engine binary and its JSON contract are documented in
``docs/engine-spec.md``. This module only bounds each trial's time,
hands the spec to the tester host (:data:`HOSTS`; this machine today,
:mod:`.local`) and checks the result's version (:mod:`.result`); it
never touches packets.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..core.errors import UsageError
from . import result as result_types
from .local import Local
from .spec import DEFAULT_SETTLE_S, TrialSpec
from .tester_host import EngineError, TesterHost

#: Every tester host, by the name ``$V6BENCH_TESTER_HOST`` gives (``local`` unless it names another).
HOSTS: dict[str, TesterHost] = {"local": Local()}


def host() -> TesterHost:
    """The tester host trials run on."""
    name = os.environ.get("V6BENCH_TESTER_HOST", "local")
    if name not in HOSTS:
        raise UsageError(f"V6BENCH_TESTER_HOST={name!r} is not one of {', '.join(HOSTS)}", "V6BENCH_TESTER_HOST")
    return HOSTS[name]


def program_sha256() -> str | None:
    """The SHA-256 of the engine program the tester host runs (recorded with a self-test), None if unreadable."""
    return host().program_sha256()


def stop_recorded(pid_file: Path) -> int | None:
    """Stops the engine a crashed command left running, as recorded in ``pid_file`` (:class:`TesterHost`)."""
    return host().stop_recorded(pid_file)


def run_rr(spec: dict[str, Any], pid_file: Path | None = None) -> dict[str, Any]:
    """Runs ``v6bench-engine rr`` (UDP request/response between two
    namespaces' own stacks, ``engine/src/rr.rs``) and returns its result.
    The engine stops the exchanges itself at ``duration_s`` after at most
    3 s of warm-up; the time-out here is a safety net above that."""
    timeout_s = float(spec["duration_s"]) + 3 + 2 * float(spec.get("timeout_ms", 100)) / 1000 + 15
    return run_trial(spec, timeout_s, pid_file, command="rr")


def run_trial(spec: TrialSpec | dict[str, Any], timeout_s: float | None = None, pid_file: Path | None = None,
              command: str = "run") -> dict[str, Any]:
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
    (:func:`stop_recorded`).
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
            + float(learning.get("settle_s", DEFAULT_SETTLE_S))
            + 15
        )
    result = host().run(command, spec, timeout_s, pid_file)
    why = result_types.problem(result) if command == "run" else None
    if why:
        raise EngineError(f"the engine's trial result is not one this v6bench reads: {why}", 1)
    return result


def version() -> dict[str, Any]:
    """The engine's ``{"engine_version", "spec_version", "result_version"}`` on the tester host."""
    return host().version()
