"""A run's ETA (campaign/eta.py) counts each [[test]] at its own pace and
the lab bring-ups still ahead: the VM campaign that showed "ETA 79 s" with
9 minutes left had cheap tests first and dear ones (and lab builds) later."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from v6bench.campaign import eta as eta_mod
from v6bench.campaign.eta import Eta


def _point(index: int, scenario: str = "") -> SimpleNamespace:
    return SimpleNamespace(test=SimpleNamespace(index=index), scenario=scenario)


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
