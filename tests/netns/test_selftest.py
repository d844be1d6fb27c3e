"""`v6bench selftest` (the tester's own capacity and latency floor on p2p),
as root, on the tests' own lab site: it measures, stores its result and
removes its temporary lab."""

from __future__ import annotations

import json

import pytest

from cli_site import clean_site, namespaces, remove_run_dir, v6bench  # noqa: F401

pytestmark = [pytest.mark.netns, pytest.mark.usefixtures("clean_site", "remove_run_dir")]


def test_selftest_measures_the_tester_and_stores_it(tmp_path):
    r = v6bench("selftest", "--frame-size", "1518", "--db", str(tmp_path / "r.db"), "--json", timeout=300)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    c = out["capacity"]["1518"]
    assert c["capacity_fps"] and c["capacity_fps"] > 10_000, c
    assert c["latency_trials"] == 5 and 0 < c["latency_min_ns"] <= c["latency_floor_ns"], c
    assert out["selftest_id"] >= 1 and out["topology"] == "p2p"
    assert namespaces() == [], "the temporary p2p lab is gone"
