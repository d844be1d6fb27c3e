"""The RFC tests on the emulated lab, from the command line, as root, on
the tests' own lab site: a DUT of known capacity is found by the
throughput search, and the router resets are seen as receive gaps."""

from __future__ import annotations

import json
import warnings

import pytest

from cli_site import clean_site, remove_run_dir, v6bench  # noqa: F401

pytestmark = [pytest.mark.netns, pytest.mark.usefixtures("clean_site", "remove_run_dir")]

LIMIT_FPS = 10_000
# The tests' trials wait 0.1 s after learning the gateways (the engine's 0.5 s is for routers that settle;
# a namespace router has nothing to settle) and drain 0.2 s (a frame crosses it in microseconds): make
# test's time budget.


def _run(tmp_path, *args, timeout=300) -> dict:
    r = v6bench(*args, "--db", str(tmp_path / "r.db"), "--json", timeout=timeout)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.mark.parametrize("search,mix", [("binary", "100/0"), ("mlr", "0/100")])
def test_throughput_finds_a_dut_of_known_capacity(tmp_path, search, mix):
    """nftables `limit rate over 10000/second drop` in R1: the true throughput
    is 10,000 frames/s per direction; the search must find it within its
    resolution (2 %) plus the limiter's 25-ms bucket per 1-s trial (2.5 %).
    Each search on one family (the limiter counts both alike): make test's
    time.

    The premise is a router that loses nothing below its limit. A software
    router on a shared (virtual) machine sometimes does: a scheduling stall
    longer than its 256-frame input ring loses frames at any rate, and one
    lost frame fails an NDR trial. When a trial below the limit lost frames,
    the premise did not hold on this run, and the test checks what still
    must: the search never reports more than the limit and brackets the
    lowest failing rate within its resolution."""
    db = tmp_path / "r.db"
    out = _run(tmp_path, "test", "throughput", "--dut-limit", str(LIMIT_FPS), "--mix", mix, "--frame-size", "128",
               "--link-speed", "100M", "--trial-duration", "1", "--resolution", "0.02", "--search", search, "--drain", "0.2", "--settle", "0.1",
               "--repeat", "1")
    assert out["run"]["environment"]["dut"]["config"]["limit_fps"] == LIMIT_FPS
    assert "limit rate over 10000/second burst 250 packets" in out["run"]["environment"]["dut"]["rulesets"]["r1"]
    r = v6bench("results", "export", "--db", str(db), "--format", "json")
    assert r.returncode == 0, r.stderr
    trials = {t["mix"]: t["trials"] for t in json.loads(r.stdout)["tests"]}
    for t in out["tests"]:
        ndr = t["result"]["ndr_fps"]
        assert ndr <= LIMIT_FPS * 1.026, (t["mix"], ndr)
        assert not t["result"]["ndr"]["is_lower_bound"]
        assert t["result"]["pdr_fps"] >= ndr
        rates = [(x["result"]["rate_per_direction_fps"], x["lost_frames"]) for x in trials[t["mix"]] if x["call"] == "measure"]
        below = [fps for fps, lost in rates if lost > 0 and fps <= LIMIT_FPS]
        if below:
            warnings.warn(f"{t['mix']}: the lab lost frames below the limit (at {min(below):.0f} fps); "
                          "only the search's own bounds were checked")
            assert ndr >= min(below) * (1 - 0.02) * 0.99, (t["mix"], ndr, below)
        else:
            assert LIMIT_FPS * 0.97 <= ndr, (t["mix"], ndr, rates)


def test_resets_show_as_receive_gaps(tmp_path):
    """A soft and a hard reset, each during a trial at the router's
    throughput (one search for both): frames due while its links are down
    are the DUT's loss (the tester neither stalls nor bursts, so the trial
    is not tester_limited), the receive gap lasts at least the reset's own
    work, and the router's NAPI threads, which the kernel starts anew, are
    pinned again."""
    out = _run(tmp_path, "test", "reset", "--kinds", "soft,hard", "--mix", "50/50", "--frame-size", "128", "--link-speed", "100M",
               "--dut-limit", str(LIMIT_FPS), "--trial-duration", "2", "--reset-at-s", "1", "--resolution", "0.2", "--drain", "0.5",
               "--settle", "0.1", "--repeat", "1")
    (t,) = out["tests"]
    r = t["result"]
    assert set(r["kinds"]) == {"soft", "hard"}, r["kinds"]
    for kind in ("soft", "hard"):
        (rep,) = r["kinds"][kind]["repetitions"]
        assert not rep["tester_limited"], rep
        assert rep["reset_kind"] == kind and 0.5 < rep["reset_at_s"] < 1.5
        assert not rep["dut_napi_pinning"].startswith("lost"), rep
        for v in ("4", "6"):
            gap = rep["families"][v]["reset_time_s"]
            # The outage lasts at least the reset's own work and is far below the trial.
            assert rep["reset_down_s"] * 0.5 < gap < 2.0, (kind, v, rep)
            assert rep["families"][v]["lost_frames"] > 0
    assert all(r["kinds"][k]["reset_time"]["4"]["repetitions"] == 1 for k in ("soft", "hard")), r["kinds"]
