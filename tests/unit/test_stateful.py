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
    found = stateful.table_capacity(dut, stateful.Params(search_max_connections=4_000_000))
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
    assert set(out) == {"metrics", "max_rate_fps", "capacity"}
    cap = out["capacity"]
    assert cap["value"] == 20_000 and cap["reached_max"] and cap["is_lower_bound"] and not cap["tester_limited"]
    assert len(cap["trials"]) == 1 and cap["trials"][0]["held"] == 20_000


def test_a_test_measures_the_metrics_asked_in_rfc_9693s_order():
    dut = SimulatedConnections(capacity=3_000, max_new_per_s=40_000, teardown_per_s=200_000, seed=2)
    out = stateful.run(dut, stateful.Params(search_max_connections=10_000, connections=2_000, max_rate_fps=200_000,
                                            metrics=("tear_down_rate", "capacity", "establishment_rate")))
    assert list(out) == ["metrics", "max_rate_fps", "capacity", "establishment_rate", "tear_down_rate"]
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
