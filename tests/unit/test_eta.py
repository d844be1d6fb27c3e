"""A run's ETA (campaign/eta.py) counts each [[test]] at its own pace and
the lab bring-ups still ahead: the VM campaign that showed "ETA 79 s" with
9 minutes left had cheap tests first and dear ones (and lab builds) later."""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest

from v6bench.campaign import eta as eta_mod
from v6bench.campaign.eta import Eta


def _point(index: int, scenario: str = "", repetition: int = 1, frame_size: int = 128) -> SimpleNamespace:
    """A scheduled test's fields the ETA reads (campaign/plan.ScheduledTest)."""
    return SimpleNamespace(test=SimpleNamespace(index=index), scenario=scenario, repetition=repetition, mix="100/0",
                           frame_size=frame_size, bidirectional=False, variant=())


def test_nothing_measured_gives_no_estimate():
    assert Eta().left_s([_point(0)]) is None


def test_each_test_at_its_own_pace_and_each_lab_bring_up_ahead(monkeypatch):
    clock = iter([100.0, 130.0])  # one visit's bring-up: 30 s
    monkeypatch.setattr(eta_mod.time, "monotonic", lambda: next(clock))
    e = Eta()
    e.visit_begins()
    e.visit_ready()
    e.test_took(0, 10.0)
    e.test_took(0, 14.0)
    e.test_took(1, 1.0)
    pending = [_point(0, "nat"), _point(1, "nat"), _point(1, "ipv6"), _point(2, "ipv6")]
    # 12 + 1 + 1 + (the unseen [[test]] 2 at every test's mean: 25/3) + one change of scenario ahead: 30.
    assert e.left_s(pending) == pytest.approx(12 + 1 + 1 + 25 / 3 + 30)
    assert eta_mod.text(5400) == "90 min" and eta_mod.text(79) == "79 s"
    assert eta_mod.text(84) == "84 s" and eta_mod.text(254) == "4 min 10 s" and eta_mod.text(596) == "10 min 00 s"
    assert eta_mod.text(600) == "10 min"


def test_a_planned_run_has_an_estimate_from_the_start_and_corrects_it_by_what_it_measures():
    """The demo showed "ETA 3 min" with 7 left: a plan gives the estimate
    before the first test ends, and the measured tests' ratio to their plan
    scales the tests not measured yet."""
    e = Eta({0: 10.0, 1: 100.0}, build_s={"a": 5.0, "b": 5.0})
    pending = [_point(0, "a", 1), _point(1, "a", 1), _point(0, "b", 1), _point(1, "b", 2), _point(1, "b", 3)]
    # Nothing measured: the plan; builds ahead: a → b, and b's blocks 1 → 2 → 3 (several scenarios: one build a block).
    assert e.left_s(pending) == pytest.approx(2 * 10 + 3 * 100 + 3 * 5)
    e.test_took(0, 20.0)  # twice its plan, over one point: trusted 1 / (1 + 10)
    assert e.left_s(pending) == pytest.approx(2 * 20 + 3 * 100 * (1 + 1 / 11) + 3 * 5)
    for _ in range(9):
        e.test_took(0, 20.0)  # ten points: trusted half
    assert e.left_s(pending) == pytest.approx(2 * 20 + 3 * 150 + 3 * 5)
    assert Eta({0: 10.0}).left_s([_point(0), _point(0, repetition=2)]) == pytest.approx(20)  # one lab: no rebuild


def test_each_scenario_s_bring_up_at_its_own_pace(monkeypatch):
    """A scenario whose routers load a 1 M table takes far longer to bring
    up than a plain one: each change ahead counts its own scenario's
    bring-up, measured, else planned, else every measured one's mean."""
    clock = iter([0.0, 40.0, 100.0, 102.0])
    monkeypatch.setattr(eta_mod.time, "monotonic", lambda: next(clock))
    e = Eta({0: 10.0}, build_s={"big": 30.0, "plain": 3.0})
    e.visit_begins("big")
    e.visit_ready()  # 40 s, not the planned 30
    e.visit_begins("plain")
    e.visit_ready()  # 2 s
    pending = [_point(0, "plain", 1), _point(0, "big", 2), _point(0, "plain", 2), _point(0, "other", 2)]
    assert e.left_s(pending) == pytest.approx(4 * 10 + 40 + 2 + (40 + 2) / 2)


def test_a_point_an_earlier_block_ran_is_counted_at_its_own_pace():
    """cisco-dualstack's VM searches took about 75 s at 86 B and 3 s at 1518 B in one [[test]]: the last
    block's pending 86-B searches are counted at 86 B's time, not at the test's mean."""
    def at(size, rep):
        return _point(0, repetition=rep, frame_size=size)
    e = Eta()
    for size, took in ((86, 75.0), (1518, 3.0)):
        e.test_took(0, took, eta_mod.point_of(at(size, 1)))
    assert e.left_s([at(86, 2), at(86, 3)]) == pytest.approx(150.0)
    assert e.left_s([at(256, 2)]) == pytest.approx(39.0)  # no block ran 256 B yet: the test's mean


def test_one_cheap_test_at_the_start_does_not_scale_the_whole_plan():
    """transition's first test, a search at the line rate (6 s where 64 were planned), made the ETA of an
    89-min plan 10 min: a ratio measured over few points is trusted in proportion to them."""
    e = Eta({0: 64.0, 1: 30.0})
    pending = [_point(0, repetition=r) for r in range(2, 61)] + [_point(1, repetition=r) for r in range(1, 61)]
    e.test_took(0, 6.0, eta_mod.point_of(_point(0)))  # the same point as test 0's pending ones
    left = e.left_s(pending)
    assert left > 0.75 * (59 * 6.0 + 60 * 30.0)  # test 0 at its own 6 s, test 1 near its plan
    assert left == pytest.approx(59 * 6.0 + 60 * 30.0 * (1 + (6 / 64 - 1) * 1 / 11))


def test_a_test_s_first_point_does_not_stand_for_its_dearer_points_below_their_plan():
    """dobrinov2016, run 17: the throughput test's first point, a 1518-B search at the line rate, took 3 s;
    its 84-B points, VM-limited, took 60-130 s, and the ETA read 44 min with 83 left. A point no block ran
    yet counts at least its test's plan, scaled by the measured tests' ratio to their plans."""
    e = Eta({0: 60.0, 1: 10.0})
    e.test_took(1, 10.0)  # on plan: the ratio is 1
    e.test_took(0, 3.0, eta_mod.point_of(_point(0, frame_size=1518)))
    pending = [_point(0, frame_size=84), _point(0, repetition=2, frame_size=1518)]
    # the 84-B point at its scaled plan (the measured ratio 13 / 70 over two points, trusted 2 / 12), not
    # 3 s; the 1518-B one at its own 3 s
    assert e.left_s(pending) == pytest.approx(60.0 * (1 + (13 / 70 - 1) * 2 / 12) + 3.0)
    e.test_took(0, 100.0, eta_mod.point_of(_point(0, frame_size=84)))
    # 512 B, not run: the larger of the scaled plan and the test's mean, (3 + 100) / 2
    assert e.left_s([_point(0, frame_size=512)]) == pytest.approx(60.0 * (1 + (113 / 130 - 1) * 3 / 13))
    for _ in range(10):
        e.test_took(1, 1.0)  # the other test far below its plan: now the test's own mean is the more
    assert e.left_s([_point(0, frame_size=512)]) == pytest.approx(51.5)


def test_a_test_of_fixed_trials_keeps_its_own_pace_whatever_the_searches_take():
    """gamess-forwarding on a VM router (run 2): three searches and a loss sweep over their plans had
    scaled the 200 host points still ahead, which ran on their plan, and the ETA read up to 50 % over the
    time left (replayed with this rule: 250 of 250 readings within ±25 %). A ``[[test]]`` whose trials
    follow from its parameters counts at its own mean once it ran; the searches' ratio scales searches
    only, trusted in proportion to their points."""
    e = Eta({0: 11.7, 1: 118.0, 2: 65.0, 3: 5.8}, unsearched=frozenset({0, 3}))
    e.test_took(0, 10.0)
    e.test_took(0, 10.6)
    for took in (116.0, 105.0, 198.0):
        e.test_took(1, took)
    e.test_took(2, 180.0)
    pending = [_point(0)] * 88 + [_point(1)] * 12 + [_point(2)] + [_point(3)] * 10
    searches = 1 + ((116 + 105 + 198 + 180) / (3 * 118 + 65) - 1) * 4 / 14
    fixed = 1 + ((10 + 10.6) / (2 * 11.7) - 1) * 2 / 12  # [[test]] 3, not run yet: the fixed tests' ratio
    # the searches at the more of their scaled plan and their own mean (139.7 s), the sweep at its own 180 s
    assert e.left_s(pending) == pytest.approx(88 * 10.3 + 12 * max(118 * searches, 419 / 3) + 180 + 10 * 5.8 * fixed)
    assert e.left_s([_point(0)] * 88) == pytest.approx(88 * 10.3)  # the host points as they ran, not × 1.49


def test_the_end_is_shown_as_a_clock_time_which_a_long_test_does_not_make_stale(monkeypatch):
    """A 300-s search keeps its progress line on screen: "ETA 90 min" is 5 min off by its end, the clock
    time it shows beside it is not."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    try:
        start = 1_795_953_600.0  # 2026-11-29 12:00:00 UTC
        assert eta_mod.ends_at(90 * 60, start) == "13:30"
        assert eta_mod.ends_at(59, start + 11 * 3600 + 59 * 60) == "23:59" and eta_mod.ends_at(61, start + 11 * 3600 + 59 * 60) == "00:00"
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
