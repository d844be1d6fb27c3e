"""RFC 9693's metrics (methods/stateful.py) on the seeded simulation of a
DUT that keeps state: known answers for the table's capacity, the maximum
connection establishment rate and the tear-down rate, and a search the
tester limits ending with a lower bound."""

import pytest

from v6bench.core.errors import UsageError
from v6bench.core.params import parse
from v6bench.methods import stateful
from v6bench.methods.simulated import SimulatedConnections


@pytest.mark.parametrize("capacity", [1, 1000, 123_457, 3_000_000])
def test_the_capacity_found_is_the_tables_within_2_percent(capacity):
    dut = SimulatedConnections(capacity=capacity, max_new_per_s=50_000, noise=0.02, seed=capacity)
    # Opened and validated at 40,000/s: the first trial's 4,000,000 connections wait 100 s, within the
    # DUT's idle timeout (at 10,000/s they would wait 400 s, and the trial is refused).
    found = stateful.table_capacity(dut, stateful.Params(search_max_connections=4_000_000, open_rate_fps=40_000,
                                                         validate_rate_fps=40_000))
    assert not found.tester_limited
    assert capacity * 0.98 <= found.value <= capacity, found.value
    assert found.failed is None or found.failed > capacity


@pytest.mark.parametrize("rate", [1_000.0, 45_678.0, 750_000.0])
def test_the_establishment_rate_found_is_the_duts_within_5_percent(rate):
    dut = SimulatedConnections(capacity=1_000_000, max_new_per_s=rate, noise=0.01, seed=7)
    found = stateful.establishment_rate(dut, stateful.Params(connections=20_000))
    assert abs(found.value / rate - 1) < 0.05, (found.value, rate)
    # Every trial started from an empty table, and its validation counted the connections held.
    for value, opened, back in found.trials:
        assert opened.tx_frames == back.tx_frames == 20_000


def test_the_tear_down_rate_is_the_connections_over_the_time_beyond_an_empty_tables():
    dut = SimulatedConnections(capacity=100_000, max_new_per_s=1e6, teardown_per_s=250_000, teardown_base_s=0.05,
                               noise=0.01, seed=3)
    out = stateful.tear_down_rate(dut, stateful.Params(connections=50_000))
    assert out["connections"] == 50_000 and abs(out["rate_per_s"] / 250_000 - 1) < 0.05, out


def test_a_tester_that_cannot_keep_the_rate_gives_a_lower_bound():
    dut = SimulatedConnections(capacity=1_000_000, max_new_per_s=900_000, tester_max_fps=300_000)
    found = stateful.establishment_rate(dut, stateful.Params(connections=10_000))
    assert found.tester_limited and 300_000 * 0.99 <= found.value <= 300_000, found


def test_parameters_are_checked_and_name_their_field():
    with pytest.raises(UsageError) as e:
        parse(stateful.Params, {"connections": 10, "search_max_connections": 5}, ("test",))
    assert e.value.field == ("test", "connections")


def test_a_table_larger_than_the_search_top_gives_a_lower_bound_that_says_so():
    dut = SimulatedConnections(capacity=500_000, max_new_per_s=1e6, seed=5)
    out = stateful.run(dut, stateful.Params(search_max_connections=20_000, connections=1_000, metrics=("capacity",)))
    assert set(out) == {"metrics", "max_rate_fps", "connection_timeout_s", "capacity"}
    cap = out["capacity"]
    assert cap["value"] == 20_000 and cap["reached_max"] and cap["is_lower_bound"] and not cap["tester_limited"]
    assert len(cap["trials"]) == 1 and cap["trials"][0]["held"] == 20_000


def test_a_test_measures_the_metrics_asked_in_rfc_9693s_order():
    dut = SimulatedConnections(capacity=3_000, max_new_per_s=40_000, teardown_per_s=200_000, seed=2)
    out = stateful.run(dut, stateful.Params(search_max_connections=10_000, connections=2_000, max_rate_fps=200_000,
                                            metrics=("tear_down_rate", "capacity", "establishment_rate")))
    assert list(out) == ["metrics", "max_rate_fps", "connection_timeout_s", "capacity", "establishment_rate",
                         "tear_down_rate"]
    assert 3_000 * 0.98 <= out["capacity"]["value"] <= 3_000 and not out["capacity"]["is_lower_bound"]
    assert abs(out["establishment_rate"]["value"] / 40_000 - 1) < 0.05
    assert abs(out["tear_down_rate"]["rate_per_s"] / 200_000 - 1) < 0.05
    with pytest.raises(UsageError) as e:
        parse(stateful.Params, {"metrics": ["capacity", "speed"]}, ("test",))
    assert e.value.field == ("test", "metrics") and "capacity, establishment_rate, tear_down_rate" in e.value.message


class SpoilsFirst(SimulatedConnections):
    """Its first preliminary phase is spoiled by a stall of the tester (tester-limited, within its capacity)."""

    spoiled = 1

    def open(self, connections, rate_fps):
        m = super().open(connections, rate_fps)
        if self.spoiled:
            self.spoiled -= 1
            return type(m)(m.duration_s, m.intended_load_fps, m.offered_load_fps, m.tx_frames, 0, True)
        return m


def test_a_pair_of_phases_the_tester_spoiled_is_run_again_from_an_empty_table():
    dut = SpoilsFirst(capacity=1_000_000, max_new_per_s=1e6)
    found = stateful.table_capacity(dut, stateful.Params(search_max_connections=1_000, connections=100))
    assert found.value == 1_000 and not found.tester_limited and dut.spoiled == 0


class LosesAPreliminaryFrame(SimulatedConnections):
    """Holds every connection it opens, but one preliminary frame a phase is lost after the DUT saw it."""

    def open(self, connections, rate_fps):
        m = super().open(connections, rate_fps)
        return type(m)(m.duration_s, m.intended_load_fps, m.offered_load_fps, m.tx_frames, m.rx_frames - 1,
                       m.tester_limited)


def test_a_step_passes_only_when_every_preliminary_and_validation_frame_arrived():
    """As siitperf: every validation frame came back, but one preliminary frame was lost: the step fails."""
    dut = LosesAPreliminaryFrame(capacity=1_000_000, max_new_per_s=1e6)
    ok, opened, back = stateful._holds(dut, 1_000, 10_000, stateful.Params())
    assert back.rx_frames == 1_000 and opened.rx_frames == 999 and ok is False
    assert stateful._holds(SimulatedConnections(capacity=1_000_000, max_new_per_s=1e6), 1_000, 10_000, stateful.Params())[0]


def test_rates_over_more_connections_than_the_table_holds_are_refused_never_0_per_s():
    """A stateful NAT64 holding 1,750 connections asked for rates over 4,000: the capacity found, then the
    establishment and tear-down rates refused with the reason, with no trial run for them."""
    dut = SimulatedConnections(capacity=1_750, max_new_per_s=40_000, seed=4)
    out = stateful.run(dut, stateful.Params(search_max_connections=10_000, connections=4_000))
    cap = out["capacity"]["value"]
    assert 1_750 * 0.98 <= cap <= 1_750
    est, down = out["establishment_rate"], out["tear_down_rate"]
    assert est["value"] is None and est["trials"] == [] and est["refused"].startswith("4,000 connections are more than")
    assert down["rate_per_s"] is None and down["why_none"] == est["refused"]
    from v6bench.report.results import _connection_metric
    assert _connection_metric("establishment_rate", est).startswith("establishment: not measured (4,000 connections")
    # Without the capacity measured, a search in which no rate passed says why, not "0/s".
    alone = stateful.run(dut, stateful.Params(connections=4_000, metrics=("establishment_rate",)))["establishment_rate"]
    assert alone["value"] is None and "may be more than the DUT's table holds" in alone["refused"] and alone["trials"]


def test_the_duts_idle_timeout_is_set_recorded_and_a_walk_longer_than_it_refused():
    """Linux keeps an unreplied UDP connection 30 s: a capacity search whose first trial opens a million
    connections at 10,000/s would validate the first of them 100 s later, measuring set-up, not holding.
    The test sets the DUT's timeout and records it; where the DUT keeps its own 30 s, it is refused
    before any trial, in one message naming the field."""
    p = stateful.Params(search_max_connections=1_000_000, connections=1_000, metrics=("capacity",))
    assert stateful.longest_wait_s(p) == 1_000_000 / 10_000 + stateful.PHASE_GAP_S
    dut = SimulatedConnections(capacity=2_000, max_new_per_s=1e6)
    out = stateful.run(dut, p)
    assert out["connection_timeout_s"] == 300.0 and dut.timeout_s == 300.0 and out["capacity"]["value"] >= 1_960
    fixed = SimulatedConnections(capacity=2_000, max_new_per_s=1e6, timeout_settable=False)
    with pytest.raises(UsageError) as e:
        stateful.run(fixed, p)
    assert e.value.field == ("connection_timeout_s",) and "wait up to 105 s" in e.value.message and "(30 s in force)" in e.value.message
    # The establishment-rate search waits longest at its slowest rate: 10,000 connections at 100/s.
    slow = stateful.Params(connections=10_000, metrics=("establishment_rate",), connection_timeout_s=60)
    with pytest.raises(UsageError, match="wait up to 105 s"):
        stateful.run(SimulatedConnections(capacity=20_000, max_new_per_s=1e6), slow)


@pytest.mark.parametrize("capacity", [1_500, 123_457])
def test_rfc9693s_capacity_search_finds_the_table_within_2_percent(capacity):
    """RFC 9693 §4.1 as its authors run it: the rate at a safe size, the size doubled while its rate holds
    above BETA of the last safe one, then bisected between the last safe size and the first unsafe one."""
    dut = SimulatedConnections(capacity=capacity, max_new_per_s=50_000, noise=0.02, seed=capacity)
    p = stateful.Params(search_max_connections=4_000_000, capacity_search="rfc9693", capacity_start=1_000,
                        max_rate_fps=200_000, validate_rate_fps=100_000)
    found = stateful.table_capacity_rfc9693(dut, p)
    assert capacity * 0.98 <= found.value <= capacity < found.failed, found
    sizes = list(dict.fromkeys(int(x) for x, _, _ in found.trials))
    doubled = [1_000 * 2 ** k for k in range(len(sizes)) if 1_000 * 2 ** k <= 2 * capacity]
    assert sizes[:len(doubled)] == doubled and doubled[-1] > capacity
    beyond = [x for x, _, _ in found.trials if x > capacity]
    assert len(beyond) == len(set(beyond)), "a size beyond the table is unsafe after one trial at the deciding rate"
    out = stateful.run(dut, p)["capacity"]
    assert out["search"] == "rfc9693" and capacity * 0.98 <= out["value"] <= capacity and not out["is_lower_bound"]


def test_rfc9693s_capacity_search_refuses_a_start_the_table_cannot_hold_and_stops_at_its_top():
    dut = SimulatedConnections(capacity=500, max_new_per_s=50_000)
    with pytest.raises(UsageError) as e:
        stateful.table_capacity_rfc9693(dut, stateful.Params(capacity_search="rfc9693", capacity_start=1_000))
    assert e.value.field == ("capacity_start",) and "give a smaller capacity_start" in e.value.message
    big = SimulatedConnections(capacity=10_000_000, max_new_per_s=50_000)
    out = stateful.run(big, stateful.Params(search_max_connections=5_000, connections=1_000, capacity_search="rfc9693",
                                            metrics=("capacity",)))["capacity"]
    assert out["value"] == 5_000 and out["reached_max"] and out["is_lower_bound"]
