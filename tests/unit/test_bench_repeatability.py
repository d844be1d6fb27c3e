"""bench/repeatability.py's campaigns are valid specs, one per router
configuration and search, and the policed router is the one they name."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import repeatability  # noqa: E402


@pytest.mark.parametrize("dut", sorted(repeatability.DUTS))
@pytest.mark.parametrize("search", sorted(repeatability.SEARCHES))
def test_campaign_per_dut_and_search(dut: str, search: str) -> None:
    c = repeatability.campaign("split", 5, search, dut)
    assert c.name == f"repeatability-split-{dut}-{search}"
    assert c.dut.limit_fps == repeatability.DUTS[dut].get("limit_fps", 0)
    assert c.lab.cpu_arrangement == "split"
    assert [t.matrix.blocks for t in c.tests] == [5, 5]


def test_policed_router_has_a_known_capacity() -> None:
    assert repeatability.campaign("split", 5, "binary", "limit50k").dut.limit_fps == 50_000
    assert repeatability.campaign("split", 5, "binary", "default").dut.limit_fps == 0


class FakeStore:
    """The two questions run_campaign asks of a results database."""

    path = "fake.db"

    def __init__(self, unfinished: int | None, finished: int | None) -> None:
        self.unfinished, self.finished = unfinished, finished

    def resumable_run(self, sha256: str) -> int | None:
        return self.unfinished

    def finished_run(self, sha256: str) -> int | None:
        return self.finished


@pytest.mark.parametrize("resume, unfinished, finished, expect", [
    (False, 3, 2, ("run", False)),    # without --resume every campaign runs anew
    (True, 3, 2, ("run", True)),      # an unfinished run is resumed, even beside a finished one
    (True, None, 2, ("read", 2)),     # a finished run is read again, not rerun
    (True, None, None, ("run", False)),  # nothing stored: run it
])
def test_resume_goes_on_where_the_bench_stopped(monkeypatch, resume, unfinished, finished, expect) -> None:
    calls = []
    monkeypatch.setattr(repeatability.runner, "run",
                        lambda site, c, store, again, command: calls.append(again) or 7)
    c = repeatability.campaign("split", 5, "binary", "default")
    run_id = repeatability.run_campaign(None, c, FakeStore(unfinished, finished), resume)
    if expect[0] == "read":
        assert run_id == expect[1] and calls == []
    else:
        assert run_id == 7 and calls == [expect[1]]


@pytest.mark.parametrize("searches, expect_pct", [
    ([[100.0, 100.0], [110.0, 110.0]], 100 * (50 ** 0.5) / 105),   # no noise inside a search: all of it is drift
    ([[90.0, 110.0], [95.0, 105.0]], 0.0),                         # equal means: no drift, whatever the noise
    ([[90.0, 110.0], [100.0, 120.0]], 0.0),                        # sampling (100) exceeds the means' spread (50): floored at 0
    ([[98.0, 102.0], [108.0, 112.0]], 100 * (50 - 4) ** 0.5 / 105),  # less the sampling variance 8/2 of a mean
])
def test_capacity_drift_is_the_spread_of_search_means_less_their_sampling_noise(searches, expect_pct) -> None:
    assert repeatability.drift_cv_pct(searches) == pytest.approx(expect_pct)
