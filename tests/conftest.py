"""Shared test helpers: the engine binary and privilege tiers."""

from __future__ import annotations

import os

import properties  # noqa: F401  (loads the property tests' profile: deterministic, or make fuzz's)
import pytest

from v6bench import engine
from v6bench.engine import local as local_engine


@pytest.fixture(scope="session")
def engine_bin():
    try:
        return local_engine.binary()
    except engine.EngineError as e:  # pragma: no cover - set-up problem
        pytest.fail(str(e))


def pytest_collection_modifyitems(config, items):
    if os.geteuid() == 0:
        return
    skip = pytest.mark.skip(reason="needs root to create network namespaces and packet sockets")
    for item in items:
        if "netns" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def postgres():
    """A PostgreSQL server of the session's own (tests/postgres_server.py)."""
    from postgres_server import Server

    server = Server()
    try:
        yield server.start()
    finally:
        server.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def store_location(request, tmp_path):
    """Where a store test's store lives: an SQLite file, or a new database on the session's PostgreSQL server."""
    if request.param == "sqlite":
        return str(tmp_path / "r.db")
    return request.getfixturevalue("postgres").new_database()


@pytest.fixture(scope="session")
def report_fixture(tmp_path_factory):
    """The committed, measured run behind the report tests
    (tests/fixtures/report-run.json.gz) in a database of its own: (store, run id)."""
    import gzip
    import json
    from pathlib import Path

    from v6bench.store.db import Store
    from v6bench.store.export import restore

    store = Store(tmp_path_factory.mktemp("report-fixture") / "fixture.db")
    export = Path(__file__).parent / "fixtures" / "report-run.json.gz"
    return store, restore(store, json.loads(gzip.decompress(export.read_bytes())))
