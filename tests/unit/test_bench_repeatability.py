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
