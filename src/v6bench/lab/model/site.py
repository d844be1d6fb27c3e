"""Where this machine's lab lives: its run directory and namespace names.

One lab per machine at a time. Its state file and lock are in
``/run/v6bench`` (tmpfs: gone at reboot, like the namespaces) and its
namespaces are ``v6b-<node>`` (``v6b-t1``, ``v6b-r1``, …). Tests use another
run directory and prefix (``V6BENCH_RUN_DIR``, ``V6BENCH_NETNS_PREFIX``) so
they never touch a user's lab.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ...core.errors import UsageError

DEFAULT_RUN_DIR = "/run/v6bench"
DEFAULT_PREFIX = "v6b-"


@dataclass(frozen=True)
class Site:
    run_dir: Path
    netns_prefix: str

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[a-z0-9][a-z0-9_-]{0,11}", self.netns_prefix):
            raise UsageError(f"V6BENCH_NETNS_PREFIX: {self.netns_prefix!r} must be 1-12 of a-z 0-9 _ -")

    @classmethod
    def from_env(cls) -> "Site":
        return cls(
            Path(os.environ.get("V6BENCH_RUN_DIR", DEFAULT_RUN_DIR)),
            os.environ.get("V6BENCH_NETNS_PREFIX", DEFAULT_PREFIX),
        )

    @property
    def state_file(self) -> Path:
        return self.run_dir / "lab.json"

    @property
    def lock_file(self) -> Path:
        return self.run_dir / "lock"

    @property
    def engine_pid_file(self) -> Path:
        """PID and start time of the engine running on this lab, if any."""
        return self.run_dir / "engine.pid"

    @property
    def lab_dir(self) -> Path:
        """The files the lab that is up made (a VM router's sockets, disks
        and console), removed with it (lab/emulated/build.destroy)."""
        return self.run_dir / "lab"

    def netns(self, node: str) -> str:
        """The namespace of ``node`` (``t1`` → ``v6b-t1``)."""
        return f"{self.netns_prefix}{node}"
