"""Which stored self-test a command is checked against (selftest.ensure):
the newest that describes this tester, so a campaign whose scenarios use
two CPU arrangements measures each once and then reuses both."""

from __future__ import annotations

import pytest

from v6bench import selftest
from v6bench.lab.model import cpus
from v6bench.store.db import Store


def stored(store: Store, arrangement: str) -> int:
    result = {"kind": "v6bench-selftest", "cpu_plan": cpus.plan(arrangement).to_json(), "mtu": 1500,
              "capacity": {"128": {"capacity_fps": 1e5}}, "environment": selftest.machine()}
    return store.add_selftest(result["environment"], result)


@pytest.fixture
def store(tmp_path):
    return Store(tmp_path / "r.db")


@pytest.fixture
def no_measuring(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a self-test was measured although a stored one fits")
    monkeypatch.setattr(selftest, "run", refuse)
    monkeypatch.setattr(selftest.interface, "status", lambda site: (None, None))


def test_each_arrangement_finds_its_own_stored_selftest(store, no_measuring):
    split_id, inline_id = stored(store, "split"), stored(store, "inline")
    ensure = lambda arr: selftest.ensure(None, store, "if-stale", (128,), (128,), 1500, arr, print)  # noqa: E731
    assert ensure("inline")[0] == inline_id
    assert ensure("split")[0] == split_id  # not the newest, but the one of this arrangement


def test_a_selftest_of_another_arrangement_is_not_taken(store, monkeypatch):
    stored(store, "inline")
    measured = []
    monkeypatch.setattr(selftest.interface, "status", lambda site: (None, None))
    monkeypatch.setattr(selftest, "run", lambda site, sizes, arr, progress, mtu: measured.append(arr) or
                        {"environment": selftest.machine(), "cpu_plan": cpus.plan(arr).to_json()})
    lines = []
    selftest.ensure(None, store, "if-stale", (128,), (128,), 1500, "split", lines.append)
    assert measured == ["split"]
    assert any("stale" in line and "arrangement" in line for line in lines), lines


def test_a_store_without_a_selftest_says_so_and_measures_one(store, monkeypatch):
    measured = []
    monkeypatch.setattr(selftest.interface, "status", lambda site: (None, None))
    monkeypatch.setattr(selftest, "run", lambda site, sizes, arr, progress, mtu: measured.append(sizes) or
                        {"environment": selftest.machine(), "cpu_plan": cpus.plan(arr).to_json()})
    lines = []
    selftest.ensure(None, store, "if-stale", (64, 128), (1518,), 1500, "split", lines.append)
    assert measured == [(64, 128, 1518)]  # the self-test's sizes and the largest frame the trials send
    assert f"tester self-test needed: {store.path} holds none" in lines, lines
