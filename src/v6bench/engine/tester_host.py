"""The tester host: where the engine runs, the one seam every trial
crosses on its way to the packets. Its contract is the engine's own: a
trial spec as JSON in (engine/spec.py, docs/engine-spec.md), the
engine's JSON result out, the engine's exit status as an
:class:`EngineError`. Today the host is this machine (:mod:`.local`);
tester ports on another host would be a module with a class satisfying
:class:`TesterHost` and one line in :data:`v6bench.engine.process.HOSTS`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol


class EngineError(RuntimeError):
    """The engine refused the spec (``bad_input``) or could not run the trial."""

    def __init__(self, message: str, exit_status: int):
        super().__init__(message)
        self.exit_status = exit_status

    @property
    def bad_input(self) -> bool:
        return self.exit_status == 2


class TesterHost(Protocol):
    """Runs the engine somewhere. ``run``: the engine's ``command`` (``run``,
    ``rr``) on ``spec`` (its JSON), stopped after ``timeout_s`` if it has not
    stopped itself (None: never), its process recorded in ``pid_file`` while
    it runs, so that whoever cleans up after a crash can stop it; the parsed
    result. A trial the engine marks interrupted (exit 130) still returns
    its result. ``version``: the engine's ``{"engine_version",
    "spec_version", "result_version"}``; ``program_sha256``: the SHA-256
    of the engine program it runs (None if it cannot be read);
    ``stop_recorded``: stops the engine ``run`` recorded in ``pid_file`` if
    that very process still runs (a crashed caller's), removes the file,
    and returns its PID if it stopped one."""

    name: str

    def run(self, command: str, spec: dict[str, Any], timeout_s: float | None,
            pid_file: Path | None) -> dict[str, Any]: ...

    def version(self) -> dict[str, Any]: ...

    def program_sha256(self) -> str | None: ...

    def stop_recorded(self, pid_file: Path) -> int | None: ...
