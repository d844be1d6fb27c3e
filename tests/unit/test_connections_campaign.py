"""A ``connections`` test (RFC 9693) from a campaign file to its verdicts,
on the seeded simulation of a DUT that keeps state: the file is checked
against the scenario's DUT, the runner stores every phase as a trial, and
the report compares IPv4 (NAT44) with IPv6 (stateful NAT64) and each
scenario with its reference; an A/A comparison comes out "no difference"."""

from __future__ import annotations

import pytest

from v6bench.campaign import plan, runner, spec
from v6bench.core.errors import UsageError
from v6bench.methods.simulated import SimulatedConnections, SimulatedTester
from v6bench.report import data, verdicts
from v6bench.report.results import headline
from v6bench.report.views import VIEWS
from v6bench.store.db import Store

FILE = """name = "c"
[lab]
topology = "a"
[[scenario]]
name = "nat"
dut = {{ nat44 = true, nat64 = "stateful" }}
[[scenario]]
name = "nat-again"
control_of = "nat"
[[test]]
kind = "connections"
frame_sizes = [128]
mixes = ["100/0", "0/100"]
search_max_connections = 5000
connections = 1000
max_rate_fps = 200000
resolution = 0.01
{extra}
"""

#: The simulated DUT's (capacity, connections opened a second) by family: NAT64 opens half as fast as NAT44.
DUT = {4: (3000, 40_000.0), 6: (3000, 20_000.0)}


def run(tmp_path, dut=DUT) -> tuple[Store, int]:
    c = spec.parse_campaign(FILE.format(extra=""), "c.toml")
    store = Store(tmp_path / "r.db")
    rid = store.start_run(c.name, "test", {"kernel": "x"}, None, c.path, c.sha256, c.text)
    seeds = iter(range(1, 1000))

    def make(p: plan.ScheduledTest) -> SimulatedTester:
        capacity, rate = dut[4 if p.mix.ipv4_pct else 6]
        return SimulatedTester(50_000, stateful=SimulatedConnections(capacity, rate, teardown_per_s=100_000,
                                                                      noise=0.01, seed=next(seeds)))

    runner.run_points(c, store, rid, make, lambda s: None)
    store.finish_run(rid, "finished")
    return store, rid


def test_a_connections_test_needs_a_dut_that_keeps_the_familys_connections():
    bare = FILE.replace('dut = {{ nat44 = true, nat64 = "stateful" }}', 'dut = {{ nat64 = "stateful" }}', 1)
    with pytest.raises(UsageError) as e:
        spec.parse_campaign(bare.format(extra=""), "c.toml")
    assert str(e.value).startswith("c.toml: test[0].mixes[0]: in scenario nat: 100/0: IPv4's connections need a DUT "
                                   "that keeps them on every flow: nat44 = true"), str(e.value)
    vm = FILE.replace('topology = "a"', 'topology = "a"\nrouter = "vm"')
    with pytest.raises(UsageError) as e:
        spec.parse_campaign(vm.format(extra=""), "c.toml")
    assert "which only namespace routers let v6bench do (this lab's routers: vm)" in str(e.value), str(e.value)
    for extra, field in (('mixes = ["50/50"]', "mixes[0]"), ("flows = 2", "connections")):
        text = FILE.format(extra="").replace('mixes = ["100/0", "0/100"]', "") + extra + "\n"
        with pytest.raises(UsageError) as e:
            spec.parse_campaign(text, "c.toml")
        assert str(e.value).startswith(f"c.toml: test[0].{field}: "), str(e.value)


def test_nat64_against_nat44_and_an_aa_control_from_the_stored_phases(tmp_path):
    store, rid = run(tmp_path)
    d = data.load(store, rid)
    tests = d.of("connections")
    assert len(tests) == 2 * 2 * 5  # scenarios × families × the 5 blocks a verdict needs by default
    for t in tests:
        calls = [x["call"] for x in store.trials(t.id)]
        assert calls and set(calls) == {"open", "validate"} and calls[::2] == ["open"] * (len(calls) // 2)
        assert headline("connections", t.result).startswith("capacity ")
    decided = {k: c for k, (p, c) in verdicts.of(d).items()}
    rate = decided[("connection establishment rate [connections/s]", "nat 128 B", "IPv6")]
    assert rate.outcome == "differs" and -55 < rate.diff_pct < -45, (rate.verdict, rate.diff_pct)
    capacity = decided[("table capacity [connections]", "nat 128 B", "IPv6")]
    assert capacity.outcome == "none", capacity.verdict
    # The control scenario is the same DUT: no difference in any searched value, each family.
    controls = [c for (metric, _, name), c in decided.items() if name.startswith("nat-again")]
    assert len(controls) == 4 and all(c.outcome == "none" for c in controls), [c.verdict for c in controls]
    table = next(t for t in VIEWS["connections"](d).tables if t.id == "connections")
    assert {(r[0], r[1], r[3]) for r in table.rows} >= {("nat", "0/100", "establishment rate [connections/s]")}
    assert all(r[4] == 5 and r[8] == 0 for r in table.rows), table.rows
