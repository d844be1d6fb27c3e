"""bench/host_memory.py: its windows, and its timing loop built and run
for a moment (it only reads memory; no root, no lab)."""

import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import host_memory  # noqa: E402


def test_window_medians_drop_the_last_partial_window() -> None:
    samples = [(0.0, 1.0), (0.5, 3.0), (1.0, 10.0), (1.2, 12.0), (1.9, 20.0), (2.1, 99.0)]
    assert host_memory.window_medians(samples, 1.0) == [2.0, 12.0]
    assert host_memory.window_medians([], 1.0) == []


def test_timing_loop_prints_a_sample_per_working_set_and_round(tmp_path) -> None:
    exe = tmp_path / "host_memory"
    subprocess.run(["cc", "-O2", "-o", str(exe), str(host_memory.SOURCE)], check=True, timeout=60)
    out = subprocess.run([str(exe), "0.05", "10", "1000", "4096", "65536"], capture_output=True, text=True,
                         check=True, timeout=30).stdout.split("\n")[:-1]
    sizes = [int(line.split()[1]) for line in out]
    assert len(sizes) >= 2 and sizes[:2] == [4096, 65536]   # both working sets, in the order given
    assert all(float(line.split()[2]) > 0 for line in out)   # ns a read


def test_timing_loop_refuses_too_few_arguments(tmp_path) -> None:
    exe = tmp_path / "host_memory"
    subprocess.run(["cc", "-O2", "-o", str(exe), str(host_memory.SOURCE)], check=True, timeout=60)
    assert subprocess.run([str(exe), "1"], capture_output=True).returncode == 2


@pytest.mark.parametrize("argv", [["--duration-s", "5", "--window-s", "10"], ["--duration-s", "7200"]])
def test_refuses_a_run_shorter_than_two_windows_or_over_an_hour(monkeypatch, argv) -> None:
    monkeypatch.setattr(sys, "argv", ["host_memory.py", *argv])
    with pytest.raises(SystemExit) as e:
        host_memory.main()
    assert e.value.code == 2
