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
    assert [t.matrix.repeat for t in c.tests] == [5, 5]


def test_policed_router_has_a_known_capacity() -> None:
    assert repeatability.campaign("split", 5, "binary", "limit50k").dut.limit_fps == 50_000
    assert repeatability.campaign("split", 5, "binary", "default").dut.limit_fps == 0
