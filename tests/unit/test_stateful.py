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
    found = stateful.table_capacity(dut, stateful.Params())
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
        parse(stateful.Params, {"connections": 10, "max_connections": 5}, ("test",))
    assert e.value.field == ("test", "connections")
