"""RFC 9693's metrics on the lab (methods/stateful.py over
trial/connections.py), as root, on the tests' own lab site: known answers
through stateful NAT64: R1 made to hold at most 1,000 connections gives a
measured capacity of 1,000 (within 2 %, RFC 9693's search), and R1 made to open at most 2,000
connections a second gives an establishment rate within 5 % of it, through NAT44 too; and
``v6bench test connections`` finds a known capacity through NAT44 and
NAT64 from the command line, storing every phase; R1's idle timeout set
and read back, and a tear-down by one netlink request."""

from __future__ import annotations

import json
import sqlite3
import subprocess

import pytest

from cli_site import PREFIX, RUN_DIR, clean_site, remove_run_dir, v6bench  # noqa: F401
from v6bench.core.frames import Traffic, parse_mix
from v6bench.lab.emulated import state
from v6bench.lab.machine import lock
from v6bench.lab.model.site import Site
from v6bench.methods import stateful
from v6bench.trial.connections import LabConnections
from v6bench.trial.lab_tester import LabTester

pytestmark = [pytest.mark.netns, pytest.mark.usefixtures("clean_site", "remove_run_dir")]
SITE = Site(RUN_DIR, PREFIX)


def lab_up(*dut: str) -> None:
    up = v6bench("lab", "up", "--nat64", "stateful", *dut)
    assert up.returncode == 0, up.stderr


def held(netns: str) -> int:
    """The connections the namespace's connection tracking holds (read apart from the code under test)."""
    return int(subprocess.run(["ip", "netns", "exec", netns, "cat", "/proc/sys/net/netfilter/nf_conntrack_count"],
                              capture_output=True, text=True, check=True).stdout)


def connections(mix: str = "0/100") -> LabConnections:
    """The lab that is up as a ConnectionTester (the caller holds its lock, as a campaign does): IPv6 from t1
    (through NAT64) by default, IPv4 (through NAT44) with ``mix`` "100/0"."""
    # Each phase is a short engine run: a short settle and drain keep make test's time (nothing to settle here).
    return LabConnections(LabTester(SITE, state.load(SITE), parse_mix(mix), 128, drain_s=0.2,
                                    traffic=Traffic(ports="fixed"), settle_s=0.1))


def test_a_translator_holding_1000_connections_has_a_capacity_of_1000():
    """By RFC 9693's search (sizes doubled from 250, a rate search at each,
    then bisected); the command-line test below searches by bisection."""
    try:
        lab_up("--max-connections", "1000")
        with lock.locked(SITE, "test"):
            found = stateful.table_capacity_rfc9693(connections(), stateful.Params(
                search_max_connections=2000, connections=1000, capacity_search="rfc9693", capacity_start=250,
                min_rate_fps=500, max_rate_fps=20_000, validate_rate_fps=2000, resolution=0.01))
        assert not found.tester_limited and 980 <= found.value <= 1000, found.value
        assert found.failed is not None and found.failed <= 1000 * 1.02 + 1, found.failed
        assert 2000 in {x for x, _, _ in found.trials}, "doubled past the table"
        # The idle timeout set on R1 and read back; a tear-down is one netlink request that empties the table.
        r1 = state.load(SITE).node("r1")["netns"]
        with lock.locked(SITE, "test"):
            c = connections()
            assert c.hold(120) == 120.0
            assert subprocess.run(["ip", "netns", "exec", r1, "sysctl", "-n", "net.netfilter.nf_conntrack_udp_timeout"],
                                  capture_output=True, text=True).stdout.strip() == "120"
            c.clear()
            assert c.open(500, 2000).rx_frames == 500 and held(r1) >= 500
            took = c.tear_down()
        assert held(r1) == 0 and 0 < took < 1.0, took
    finally:
        v6bench("lab", "down")


def test_a_translator_opening_2000_connections_a_second_has_that_establishment_rate():
    """The known answer, 2,000/s within 5 %, through NAT64 and through NAT44
    (one lab: R1's limit counts the IPv4 connections either opens). On this 2-vCPU machine a busy
    host can make a validation lose a few frames that no counter marks as
    the tester's (991 of 1,000 with a busy loop on the tester's CPU, with
    this session's code and with 281dc77's alike), and the search then
    ends below the answer: a spoiled search only ever reads low (a lost
    frame fails its load). So up to three searches run until one finds
    the answer; none of three at it, or any above it, fails. (A fresh
    clone of 1d19ea8, this test a minute after the release build: 1,647,
    1,586, then 1,998; run alone three times: passed, once after a low first search.)"""
    # The search from twice the answer to 2 %, within the 5 % asked (8,000 and 1 %: two steps more a search).
    params = stateful.Params(connections=1000, min_rate_fps=200, max_rate_fps=4000, validate_rate_fps=1000,
                             resolution=0.02)
    try:
        lab_up("--nat44", "--max-new-connections", "2000")
        for mix in ("0/100", "100/0"):
            found = []
            with lock.locked(SITE, "test"):
                while len(found) < 3 and not any(abs(f.value / 2000 - 1) < 0.05 for f in found):
                    found.append(stateful.establishment_rate(connections(mix), params))
            values = [f.value for f in found]
            assert all(v < 2000 * 1.05 for v in values), (mix, values)
            assert any(not f.tester_limited and abs(f.value / 2000 - 1) < 0.05 for f in found), (mix, values)
    finally:
        v6bench("lab", "down")


def test_the_connections_test_finds_a_known_capacity_through_nat44_and_nat64(tmp_path):
    db = tmp_path / "r.db"
    r = v6bench("test", "connections", "--nat64", "stateful", "--nat44", "--max-connections", "500",
                "--mix", "100/0,0/100", "--repeat", "1", "--metrics", "capacity", "--search-max-connections", "1000",
                "--connections", "500", "--open-rate", "5000", "--validate-rate", "5000", "--resolution", "0.01",
                "--drain", "0.2", "--settle", "0.1", "--selftest", "never", "--db", str(db), "--json", timeout=600)
    assert r.returncode == 0, r.stderr
    tests = json.loads(r.stdout)["tests"]
    assert sorted(t["mix"] for t in tests) == ["0/100", "100/0"]
    for t in tests:
        cap = t["result"]["capacity"]
        assert not cap["is_lower_bound"] and 490 <= cap["value"] <= 500, (t["mix"], cap)
        assert t["result"]["connection_timeout_s"] == 300.0
    with sqlite3.connect(db) as c:
        calls = [row[0] for row in c.execute("SELECT call FROM trials ORDER BY test_id, seq")]
    assert calls and set(calls) == {"open", "validate"}
    assert state.load(SITE) is None and not state.our_namespaces(SITE), "the test's lab is down again"
