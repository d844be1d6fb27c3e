"""bench/search_cost.py's campaign is a valid spec whose three searches
run in the order the bench reads them, the last started from the first
two's frame size (with the simulated tester: no root)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import search_cost  # noqa: E402

from v6bench.campaign import runner  # noqa: E402
from v6bench.methods.simulated import SimulatedTester  # noqa: E402
from v6bench.store.db import Store  # noqa: E402


def test_the_three_searches_run_in_order_on_the_policed_router(tmp_path) -> None:
    c = search_cost.campaign(50_000)
    assert c.dut.limit_fps == 50_000 and c.design.order == "file"
    assert [(t.params.search, t.params.trial_duration_s, t.params.start) for t in c.tests] == [
        ("binary", 60.0, "line"), ("mlr", 60.0, "line"), ("binary", 60.0, "neighbour")]
    store = Store(tmp_path / "s.db")
    run_id = store.start_run(c.name, "test", {"kernel": "x"}, None, c.path, c.sha256, c.text)
    runner.run_points(c, store, run_id, lambda p: SimulatedTester(50_000, line_fps=844_594.0, buffer_frames=1000),
                      lambda line: None)
    rows = search_cost.rows(store, run_id)
    assert [(r["search"], r["frame_size"]) for r in rows] == [("rfc2544", 128), ("mlr", 128), ("neighbour", 256)]
    assert all(49_500 <= r["ndr_fps"] <= 50_000 for r in rows)
    assert rows[2]["started_from"] == "the neighbour's result (100/0 at 128 B, earlier in this run)"
    assert rows[1]["trials"] < rows[0]["trials"] and rows[2]["trials"] < rows[0]["trials"]
