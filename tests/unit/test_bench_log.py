"""bench/bench_log.py: a bench run's figures as one JSON line beside the
benches, with the machine and the commit that made them (docs/performance.md)."""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import bench_log  # noqa: E402


def test_a_run_appends_one_row_with_its_machine_commit_options_and_figures(tmp_path: Path) -> None:
    first = bench_log.append("demo", {"rounds": 3}, {"ratio": 1.9}, log_dir=tmp_path)
    second = bench_log.append("demo", {"rounds": 5}, [{"fps": 10}], log_dir=tmp_path)
    assert first == second == tmp_path / "demo.jsonl"
    rows = [json.loads(line) for line in first.read_text().splitlines()]
    assert [r["options"] for r in rows] == [{"rounds": 3}, {"rounds": 5}]
    assert rows[0]["figures"] == {"ratio": 1.9} and rows[1]["figures"] == [{"fps": 10}]
    for r in rows:
        assert r["bench"] == "demo" and r["date"].endswith("Z") and r["at_unix_s"] > 0
        assert r["machine"]["cpus"] >= 1 and "model_name" in r["machine"] and "kernel" in r["machine"]
        assert r["commit"] is None or len(r["commit"].split("+")[0]) == 40


def test_every_bench_that_make_bench_runs_writes_its_row() -> None:
    root = Path(__file__).resolve().parents[2]
    benches = [line.split()[1] for line in (root / "Makefile").read_text().splitlines()
               if line.strip().startswith("$(PY) bench/")]
    assert len(benches) >= 6
    for b in benches:
        name = Path(b).stem
        assert f'bench_log.append("{name}"' in (root / b).read_text(), b
