"""bench/sensitivity.py's rows: the family comparisons it is about (the
paired delays at its delay load, the cost per frame of the mix regression
and in runs), each flow-2-against-flow-1 comparison named so, the A/A
controls apart, and nothing else of the report (a scenario against plain
forwarding across trials, the delays of other trials)."""

import sys
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import sensitivity  # noqa: E402


def _pair(point: str, metric: str, control: bool = False, name_a: str = "IPv4") -> SimpleNamespace:
    return SimpleNamespace(point=point, metric=metric, control=control, name_a=name_a)


def _comparison(design: str, center_a: float = 10.0, diff_pct: float = 1.0) -> SimpleNamespace:
    return SimpleNamespace(design=design, n_a=10, center_a=center_a, diff_pct=diff_pct, ci_low_pct=0.5,
                           ci_high_pct=1.5, mde_pct=0.4, p_adjusted=0.01, outcome="differs", verdict="differs")


def test_rows_keep_the_family_comparisons_and_leave_the_rest(monkeypatch) -> None:
    report = {
        1: (_pair("plain ×2 flows 128 B at 20kfps (50/50)", "median latency [µs]"), _comparison("paired", 23.0)),
        2: (_pair("plain ×2 flows 128 B at 60kfps (100/0 vs 0/100)", "median latency [µs]"), _comparison("unpaired")),
        3: (_pair("plain 128 B at 60kfps (mixes 100/0, 0/100)", "cost per frame [ns]"),
            _comparison("mix regression", 7400.0)),
        4: (_pair("plain ×2 flows in 0.1-s runs 128 B at 60kfps (50/50)", "cost per frame [ns]"),
            _comparison("paired", 7500.0)),
        5: (_pair("acl10-flow2 ×2 flows in 0.1-s runs 128 B at 60kfps (50/50) IPv6", "cost per frame [ns]",
                  name_a="flow 1"), _comparison("paired", 7600.0)),
        # Each scenario against plain forwarding across trials (report/scenario_pairs.network_types): not this bench's.
        6: (_pair("128 B at 60kfps (100/0)", "cost per frame [ns]"), _comparison("unpaired", 7438.0, 27.0)),
        7: (_pair("plain ×2 flows 128 B at 20kfps (50/50) IPv4", "median latency [µs]", control=True, name_a="flow 1"),
            _comparison("paired")),
    }
    monkeypatch.setattr(sensitivity.verdicts, "of", lambda run: report)
    controls, effects = sensitivity.rows(None, "20kfps")
    assert [c["point"] for c in controls] == ["plain ×2 flows 128 B at 20kfps (50/50) IPv4"]
    assert [(e["scenario"], e["metric"], e["design"]) for e in effects] == [
        ("plain", "median latency", "paired"),
        ("plain", "cost per frame", "mix regression"),
        ("plain", "cost per frame (runs)", "paired"),
        ("acl10-flow2", "cost per frame (runs, flow 2 − 1)", "paired"),
    ]
    delay = effects[0]
    assert delay["a"] == 23_000.0 and abs(delay["diff_ns"] - 230.0) < 1e-9  # µs centres in ns; 1 % of 23 µs
