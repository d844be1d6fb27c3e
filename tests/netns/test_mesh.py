"""Mesh traffic on a mesh:4 lab (RFC 2889 §5.1, seed 004 §2.3–2.4), as
root: with every router port shaped to 100 Mb/s, a partial mesh of three
senders at 50 % each really congests the receiver's port, so each flow
loses about a third (1 − 100/150); a full mesh at the same load loses
nothing, and every flow is counted on its own. Then `v6bench test mesh`
stores the loss per flow."""

from __future__ import annotations

import json

import pytest

from cli_site import clean_site, remove_run_dir, trial_json, v6bench  # noqa: F401

pytestmark = [pytest.mark.netns, pytest.mark.usefixtures("clean_site", "remove_run_dir")]


def mesh_trial(pattern: str) -> dict:
    return trial_json("--mesh", pattern, "--mix", "50/50", "--frame-size", "1518", "--rate", "50%", "--duration", "2")


def test_partial_mesh_congests_the_converging_port_and_full_mesh_does_not(tmp_path):
    assert v6bench("lab", "up", "--topology", "mesh:4", "--link-speed", "100M", "--shape").returncode == 0
    try:
        res = mesh_trial("partial")
        assert not res["tester_limited"], res["tester_limited_reasons"]
        assert {s["direction"] for s in res["streams"]} == {"t1->t4", "t2->t4", "t3->t4"}
        assert len(res["streams"]) == 6  # three senders × two families
        for s in res["streams"]:
            assert s["tx_frames"] == s["rx_frames"] + s["lost_frames"]
            assert 0.25 < s["loss_ratio"] < 0.42, s  # 1 − 1/1.5 = 0.33, less what the 20-ms queue holds
        assert res["mesh_start_spread_s"] < 0.01 * 2

        res = mesh_trial("full")
        assert not res["tester_limited"], res["tester_limited_reasons"]
        flows = {s["direction"] for s in res["streams"]}
        assert flows == {f"t{a}->t{b}" for a in range(1, 5) for b in range(1, 5) if a != b}
        assert res["lost_frames"] == 0 and res["rx_frames"] == res["tx_frames"] > 0

        db = tmp_path / "r.db"
        r = v6bench("test", "mesh", "--pattern", "partial", "--rate", "20%,50%", "--duration", "1", "--frame-size", "1518",
                    "--mix", "90/10", "--db", str(db), "--json", timeout=300)
        assert r.returncode == 0, r.stderr
        (test,) = json.loads(r.stdout)["tests"]
        low, high = test["result"]["loads"]
        assert low["lost_frames"] == 0, low  # 3 × 20 % fits the receiver's 100 %
        assert high["loss_ratio"] > 0.25 and {f["direction"] for f in high["flows"]} == {"t1->t4", "t2->t4", "t3->t4"}
        assert set(high["families"]) == {"4", "6"}
    finally:
        v6bench("lab", "down")


def test_mesh_needs_a_mesh_topology():
    r = v6bench("trial", "--mesh", "full", "--topology", "a", "--duration", "1")
    assert r.returncode == 2 and "mesh:N" in r.stderr
