"""`v6bench selftest` (the tester's own capacity and latency floor on p2p),
as root, on the tests' own lab site: it measures, stores its result and
removes its temporary lab; and `v6bench trial` consults it, measuring it
first when it is stale (here: made on another tester backend) and taking
it as it is when fresh. A missing one is measured like a stale one
(tests/unit/test_selftest_choice.py)."""

from __future__ import annotations

import json
import sqlite3

import pytest

from cli_site import clean_site, namespaces, remove_run_dir, v6bench  # noqa: F401

pytestmark = [pytest.mark.netns, pytest.mark.usefixtures("clean_site", "remove_run_dir")]


def _trial(db, *extra):
    return v6bench("trial", "--frame-size", "1518", "--rate", "1kfps", "--duration", "1", "--json", "--db", str(db),
                   *extra, timeout=300, env={"V6BENCH_SELFTEST": "if-stale"})


def test_selftest_is_stored_then_a_trial_measures_a_stale_one_first_and_reuses_a_fresh_one(tmp_path):
    # The self-test command, on the AF_PACKET backend: the one with kernel transmit stamps to check the carried ones
    # against.
    db = tmp_path / "r.db"
    r = v6bench("selftest", "--frame-size", "1518", "--db", str(db), "--json", timeout=300,
                env={"V6BENCH_TESTER_BACKEND": "af_packet"})
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    c = out["capacity"]["1518"]
    assert c["tester_backend"] == "af_packet" and out["environment"]["tester_backend"] == "af_packet"
    assert c["capacity_fps"] and c["capacity_fps"] > 10_000, c
    # Five latency trials the tester did not spoil: a spoiled one (a host stall on AF_PACKET) is run again, up to ten.
    assert c["latency_trials"] == 5 <= c["latency_attempts"] <= 10 and 0 < c["latency_min_ns"] <= c["latency_floor_ns"], c
    # The stamps were checked against the kernel's: a part of the floor, measured on every frame of the five trials
    # (the engine sends round(rate × duration) frames a trial; the load is a tenth of the capacity when that is lower).
    assert c["tx_stamp_checked_frames"] == 5 * round(c["latency_load_fps"] * 1.0), c
    assert 0 < c["tx_stamp_lead_p50_ns"] <= c["tx_stamp_lead_p99_ns"] and c["tx_stamp_lead_p50_ns"] < c["latency_floor_ns"], c
    assert out["selftest_id"] >= 1 and out["topology"] == "p2p" and out["mtu"] == 1500
    assert out["environment"]["engine_sha256"] and out["environment"]["kernel"]
    assert namespaces() == [], "the temporary p2p lab is gone"

    # A trial on the default backend (auto) finds the stored self-test stale, says why, and measures one first.
    first = _trial(db)
    assert first.returncode == 0, first.stderr
    assert "the stored one is stale (its tester packet I/O (V6BENCH_TESTER_BACKEND) was af_packet, now auto)" in \
        first.stderr, first.stderr
    trial = json.loads(first.stdout)
    floor = trial["tester_latency_floor"]
    assert floor["frame_size"] == 1518 and floor["floor_ns"] > 0 and floor["stddev_ns"] is not None
    # auto: AF_XDP on the lab's veth ports, for the self-test as for the trial; it has no kernel transmit stamps.
    assert {p["backend"] for p in trial["engine"]["ports"]} == {"af_xdp"}
    assert floor["tx_stamp_lead_ns"] is None
    con = sqlite3.connect(db)
    assert con.execute("SELECT COUNT(*) FROM selftests").fetchone()[0] == 2
    # Fresh now: the next trial takes it as it is.
    again = _trial(db)
    assert again.returncode == 0 and "self-test" not in again.stderr, again.stderr
    assert json.loads(again.stdout)["tester_latency_floor"] == floor
    # --selftest never takes the stored one as it is, measuring nothing.
    never = _trial(db, "--selftest", "never")
    assert never.returncode == 0 and "self-test" not in never.stderr
    assert con.execute("SELECT COUNT(*) FROM selftests").fetchone()[0] == 2
    assert namespaces() == []
