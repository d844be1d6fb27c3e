"""The type checker (mypy, strict; pyproject.toml's [tool.mypy]) on the
lab and the trial layer: each kind of lab and its backend satisfy the lab
protocol (lab/protocol.py), every function says its types, and no value
that may be None is used as if it could not."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_lab_and_trial_layers_type_check_strictly():
    r = subprocess.run([sys.executable, "-m", "mypy", "--no-error-summary", "--cache-dir", str(ROOT / ".mypy_cache")],
                       cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
