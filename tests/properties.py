"""How the property tests draw their cases: the same ones in ``make test``,
new ones in ``make fuzz``.

``make test`` (and so CI) loads the ``deterministic`` profile: hypothesis
draws each test's cases from a seed fixed by the test itself
(``derandomize``) and reads or writes no example database, so a commit
passes or fails the same way on every clone (with the pinned hypothesis
of ``pyproject.toml``). A case that ever failed stays in the test as an
``@example``, run first every time.

``make fuzz`` sets ``V6BENCH_FUZZ=1``: the ``fuzz`` profile draws new
cases every run, ``V6BENCH_FUZZ_SCALE`` times as many (default 40 in make fuzz), and
keeps hypothesis's example database in ``.fuzz/hypothesis`` between runs,
so a failure it found is tried first next time until it is mended (and
then kept as an ``@example``).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.database import DirectoryBasedExampleDatabase

FUZZ = os.environ.get("V6BENCH_FUZZ") == "1"
#: How many times each test's own count of cases ``make fuzz`` draws.
SCALE = max(1, int(os.environ.get("V6BENCH_FUZZ_SCALE", "40"))) if FUZZ else 1
DATABASE = Path(__file__).resolve().parents[1] / ".fuzz" / "hypothesis"

settings.register_profile("deterministic", derandomize=True, database=None, deadline=None, print_blob=True)
settings.register_profile("fuzz", derandomize=False, database=DirectoryBasedExampleDatabase(str(DATABASE)),
                          deadline=None, print_blob=True)
settings.load_profile("fuzz" if FUZZ else "deterministic")

#: Marks a property test (``make fuzz`` runs these: ``pytest -m property``).
property_test = pytest.mark.property


def cases(n: int) -> settings:
    """A property test's settings: ``n`` cases (``make fuzz``: ``SCALE``
    times as many), the rest from the profile loaded above."""
    return settings(max_examples=n * SCALE, suppress_health_check=[HealthCheck.function_scoped_fixture])
