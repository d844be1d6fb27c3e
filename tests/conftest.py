"""Shared test helpers: the engine binary and privilege tiers."""

from __future__ import annotations

import os

import pytest

from v6bench import engine


@pytest.fixture(scope="session")
def engine_bin():
    try:
        return engine.binary()
    except engine.EngineError as e:  # pragma: no cover - set-up problem
        pytest.fail(str(e))


def pytest_collection_modifyitems(config, items):
    if os.geteuid() == 0:
        return
    skip = pytest.mark.skip(reason="needs root to create network namespaces and packet sockets")
    for item in items:
        if "netns" in item.keywords:
            item.add_marker(skip)
