"""Each bench run's figures, kept as data beside the benches.

Every bench appends one JSON line to ``bench/log/BENCH.jsonl`` when it
finishes: the bench, when (``at_unix_s``, ``date``), the machine that
measured (``core/machine.read``: CPU vendor, model, family, stepping,
caches, CPUs, hypervisor, kernel), the commit it ran from (``+dirty`` when
the tree had changes), its options and its figures as it printed them. A
figure holds for the machine that made it, so no row is kept without one.
``docs/performance.md`` holds the one short table of current figures;
these rows (and, for runs before the rows existed, the dated record
``bench/log/performance-2026-11.md``) are where each comes from.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from v6bench.core import machine  # noqa: E402

LOG_DIR = Path(__file__).resolve().parent / "log"


def commit(repo: Path = LOG_DIR.parents[1]) -> str | None:
    """The commit the bench ran from, ``+dirty`` with uncommitted changes;
    None outside a git work tree."""
    try:
        head = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return head + ("+dirty" if dirty else "")


def append(bench: str, options: dict[str, Any], figures: Any, log_dir: Path = LOG_DIR) -> Path:
    """Append one run's row to ``log_dir/BENCH.jsonl`` and return the file."""
    now = time.time()
    row = {"bench": bench, "at_unix_s": round(now, 3), "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now)),
           "machine": machine.read(), "commit": commit(), "options": options, "figures": figures}
    log_dir.mkdir(parents=True, exist_ok=True)
    path = log_dir / f"{bench}.jsonl"
    with path.open("a") as f:
        f.write(json.dumps(row, sort_keys=True, default=str) + "\n")
    print(f"(figures appended to {path})")
    return path
