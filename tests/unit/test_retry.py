"""Trials the tester spoiled are run again, a bounded number of times,
and never when the load was beyond the tester's capacity (methods/retry.py)."""

from dataclasses import replace

import pytest

from v6bench.campaign import runner, spec
from v6bench.methods import registry, retry, throughput
from v6bench.methods.simulated import SimulatedTester
from v6bench.store.db import Store

STALLED = {"tester_limited_reasons": ["300 frames sent in one catch-up burst"]}
SUSPECT = {"suspect_reasons": ["stream x: 3 frames received before they were sent"]}


class Stalls(SimulatedTester):
    """The simulated DUT behind a tester that stalls in the trials numbered in ``stall`` (0-based)."""

    def __init__(self, *a, stall=(), spoil=STALLED, **kw):
        super().__init__(*a, **kw)
        self.stall, self.spoil, self.n = set(stall), spoil, 0

    def measure(self, duration_s, load_fps):
        m = super().measure(duration_s, load_fps)
        self.n += 1
        if self.n - 1 in self.stall:
            return replace(m, tester_limited="tester_limited_reasons" in self.spoil, detail={**(m.detail or {}), **self.spoil})
        return m


@pytest.mark.parametrize("spoil", [STALLED, SUSPECT])
def test_a_spoiled_trial_is_run_again_and_the_last_attempt_returned(spoil):
    t = Stalls(50_000, stall={0}, spoil=spoil)
    r = retry.Retrying(t)
    m = r.measure(1.0, 10_000)
    assert len(t.calls) == 2 and not retry.spoiled(m)
    assert m.extra["spoiled_attempts"] == 1 and r.repeated == 1


def test_repeats_are_bounded():
    t = Stalls(50_000, stall=range(100))
    m = retry.Retrying(t).measure(1.0, 10_000)
    assert len(t.calls) == 1 + retry.RETRIES and m.tester_limited
    assert m.extra["spoiled_attempts"] == retry.RETRIES


def test_a_load_beyond_the_testers_capacity_is_not_repeated():
    t = SimulatedTester(900_000, tester_max_fps=300_000)
    m = retry.Retrying(t).measure(1.0, 400_000)
    assert m.tester_limited and m.tester_over_capacity and len(t.calls) == 1 and "spoiled_attempts" not in m.extra


def _loads(params):
    """The loads an undisturbed search tries, in order."""
    t = SimulatedTester(50_000, buffer_frames=0)
    throughput.run(t, params, 128)
    return [c[2] for c in t.calls]


@pytest.mark.parametrize("search", ["binary", "mlr"])
def test_one_stall_no_longer_turns_a_search_into_a_lower_bound(search):
    params = throughput.Params(search=search, trial_duration_s=1, resolution=0.01)
    # The first trial at a load the DUT passes stalls: unprotected, the search's result is a lower bound …
    first_pass = next(n for n, c in enumerate(_loads(params)) if c <= 50_000)
    bare = throughput.run(Stalls(50_000, buffer_frames=0, stall={first_pass}), params, 128)
    assert bare["ndr"]["is_lower_bound"]
    # … through registry.run it is run again and the search finds the DUT's NDR.
    t = Stalls(50_000, buffer_frames=0, stall={first_pass})
    r = registry.run(registry.kind("throughput"), t, params, registry.Point(128, 100e6), params)
    assert not r["ndr"]["is_lower_bound"] and 49_000 <= r["ndr_fps"] <= 50_000
    assert r["trials_repeated"] == 1


def _latency_run(tmp_path, test_keys: str, tester) -> tuple[Store, int]:
    """A one-test latency campaign (topology a, 100M, 100/0 at 128 B) run on ``tester``."""
    c = spec.parse_campaign(LATENCY_CAMPAIGN + test_keys, "t.toml")
    store = Store(tmp_path / "r.db")
    rid = store.start_run(c.name, "test", {"kernel": "x"}, None, c.path, c.sha256, c.text)
    runner.run_points(c, store, rid, lambda p: tester, lambda s: None)
    return store, rid


LATENCY_CAMPAIGN = """name = "t"
[lab]
topology = "a"
link_speed = "100M"
[matrix]
mixes = ["100/0"]
frame_sizes = [128]
[[test]]
kind = "latency"
"""


def test_every_attempt_is_stored_as_a_trial(tmp_path):
    store, rid = _latency_run(tmp_path, 'loads = ["10kfps"]\ntrial_duration_s = 1.0\nrepeat = 3\n',
                              Stalls(50_000, line_fps=84_459.0, stall={1}))
    (test,) = store.tests(rid)
    trials = store.trials(test["id"])
    assert [bool(x["tester_limited"]) for x in trials] == [False, True, False, False]
    assert test["result"]["trials_repeated"] == 1
    assert test["result"]["loads"][0]["families"]["4"]["repetitions"] == 3


def test_a_latency_tests_own_search_is_not_counted_among_its_trials(tmp_path):
    """`v6bench test latency` at the throughput searches first, inside the
    test: the search's trial at the NDR load runs at exactly the latency
    load, and must not count as one of the latency trials."""
    from v6bench.report import data, samples

    store, rid = _latency_run(tmp_path, 'loads = ["throughput"]\ntrial_duration_s = 1.0\nrepeat = 3\n'
                              '[test.throughput_search]\ntrial_duration_s = 1.0\nresolution = 0.01\n',
                              Stalls(50_000, line_fps=84_459.0, buffer_frames=0, stall={4}))
    (t,) = data.load(store, rid).of("latency")
    n = t.result["throughput_search_trials"]
    assert t.result["throughput_from"] == "searched for this test" and t.result["trials_repeated"] == 1
    assert len(t.trials) == n + 3 and n > 3
    row = t.result["loads"][0]
    at_load = [x for x in t.trials if x["call_args"]["load_fps"] == row["load_fps"]]
    assert len(at_load) > 3  # the search passed at that load too …
    assert [x["seq"] for x in samples.load_trials(t, row)] == [n, n + 1, n + 2]  # … but only the test's own count


def test_the_selftests_capacity_is_not_set_by_one_stall():
    """The self-test's search repeats a stalled trial like every method: a
    tester that stalls in the first attempt at every load (even calls) still
    finds its capacity, to the search's resolution; bounded attempts."""
    from v6bench import selftest

    capacity = 400_000
    r, attempts = selftest.search_capacity(Stalls(capacity, buffer_frames=0, stall=range(0, 200, 2)), 64)
    assert capacity * (1 - selftest.RESOLUTION) <= r.throughput_fps <= capacity
    assert attempts == 2 * len(r.trials) <= 2 * 14
    # Without the repeats, the first stall (at the first load) would be the search's first failure.
    plain = selftest.binary_search.search(Stalls(capacity, buffer_frames=0, stall=range(0, 200, 2)), selftest.TRIAL_S,
                                         selftest.line_rate_fps(selftest.LINK_BPS, 64), selftest.RESOLUTION, max_trials=14)
    assert plain.throughput_fps < capacity * (1 - selftest.RESOLUTION)


def test_the_selftest_does_not_repeat_a_trial_whose_sender_fell_short_of_its_rate():
    """Above the tester's reach the sender offers less than the rate (the
    simulation: ``tester_max_fps``), unflagged by any self-test: one attempt
    a load there; below it a stalled first attempt is repeated."""
    from v6bench import selftest

    class Unflagged(Stalls):
        def _detail(self, load_fps):
            return None

    t = Unflagged(900_000, buffer_frames=0, tester_max_fps=300_000, stall=range(0, 400))
    r, attempts = selftest.search_capacity(t, 64)
    above = [c for c in t.calls if c[2] > 300_000]
    below = [c for c in t.calls if c[2] <= 300_000]
    assert above and below and len(t.calls) == attempts
    assert len({c[2] for c in above}) == len(above)  # one attempt at each load beyond reach
    assert len(below) == (1 + selftest.RETRIES) * len({c[2] for c in below})  # stalled there: every attempt ran


def test_the_selftest_searches_on_from_the_rate_its_senders_reached_at_the_links():
    """The first trial at 10 Gb/s (128 B: 8.4 million frames/s) shows the
    most the senders send (here 300,000 frames/s); the search goes on from
    there, not down from the link's rate by halves: the same capacity to the
    resolution, every trial in the result, and fewer trials than the
    halving search (6 against 11 in this simulation)."""
    from v6bench import selftest

    line = selftest.line_rate_fps(selftest.LINK_BPS, 128)
    t = SimulatedTester(250_000, buffer_frames=0, tester_max_fps=300_000)
    r, attempts = selftest.search_capacity(t, 128)
    loads = [c[2] for c in t.calls]
    assert loads[0] == line and loads[1] == 300_000 and attempts == len(loads) == len(r.trials)
    assert 250_000 * (1 - selftest.RESOLUTION) <= r.throughput_fps <= 250_000 and r.failed_fps is not None
    halving = selftest.binary_search.search(selftest.Retrying(selftest._Beyond(SimulatedTester(
        250_000, buffer_frames=0, tester_max_fps=300_000)), selftest.RETRIES), selftest.TRIAL_S, line,
        selftest.RESOLUTION, max_trials=selftest.MAX_SEARCH_TRIALS)
    assert halving.throughput_fps == pytest.approx(r.throughput_fps, rel=selftest.RESOLUTION)
    assert (len(halving.trials), len(r.trials)) == (11, 6)


def test_a_sender_that_keeps_slipping_is_beyond_the_tester_but_a_passing_pause_is_not():
    """In ``slip`` mode the engine's ``offered_fps`` leaves the slipped pauses
    out (docs/engine-spec.md), so a sender far too slow for the rate still
    shows it kept the rate; the self-test takes the rate over the whole
    sending time. Figures of a trial measured here: 2,111,486 frames/s
    asked for 1 s, 280 ms slipped in 2,449 pauses (78 % achieved), against
    one pause of 2 ms (99.8 %)."""
    from v6bench import selftest
    from v6bench.core.tester import Measurement

    def trial(slipped_ns):
        tx = {"intended_fps": 2_111_486.0, "offered_fps": 2_111_456.0, "tx_frames": 2_111_486, "slipped_ns": slipped_ns}
        detail = {"engine": {"ports": [{"tx": tx}, {"tx": None}]}}
        return Measurement(1.0, 2_111_486.0, 2_111_456.0, 2_111_486, 2_111_000, True, detail)

    assert selftest.sending_ratio(trial(279_931_092)) == pytest.approx(1 / 1.28, abs=0.005)
    assert selftest.sending_ratio(trial(2_000_000)) == pytest.approx(0.998, abs=0.001)

    class Engine:
        line_fps = 2_111_486.0

        def __init__(self, slipped_ns):
            self.slipped_ns, self.calls = slipped_ns, 0

        def measure(self, duration_s, load_fps):
            self.calls += 1
            return trial(self.slipped_ns)

    for slipped_ns, tries in ((279_931_092, 1), (2_000_000, 1 + retry.RETRIES)):
        e = Engine(slipped_ns)
        retry.Retrying(selftest._Beyond(e)).measure(1.0, 2_111_486.0)
        assert e.calls == tries


def test_an_overloaded_dut_that_stalls_the_tester_twice_in_a_row_is_not_tried_five_times():
    """A VM router fed far above its throughput backs up into the tester's ports: every attempt stalls
    the senders and loses frames. Two such attempts end the repeats; the last stays tester-limited."""
    t = Stalls(50_000, stall=range(100))
    m = retry.Retrying(t).measure(1.0, 100_000)  # half the frames lost in every attempt
    assert len(t.calls) == 2 and m.tester_limited and m.extra["spoiled_attempts"] == 1
    assert m.loss_ratio >= retry.OVERLOADED_LOSS_RATIO


def test_a_stall_at_a_load_the_dut_carries_is_repeated_as_often_as_ever():
    t = Stalls(50_000, stall={0, 1, 2})  # three chance stalls in a row, nothing lost
    m = retry.Retrying(t).measure(1.0, 10_000)
    assert len(t.calls) == 4 and not m.tester_limited


def test_a_clean_repeat_after_one_overloaded_attempt_gives_the_dut_s_own_loss():
    t = Stalls(50_000, stall={0})
    m = retry.Retrying(t).measure(1.0, 100_000)
    assert len(t.calls) == 2 and not m.tester_limited and m.loss_ratio > 0.4
