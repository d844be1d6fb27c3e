"""The DUT's CPU over the traffic window (lab/machine/cpu_window.py), checked
against an independent reading: the DUT CPU's own busy time from
/proc/stat over the same window."""

from __future__ import annotations


import pytest

from v6bench.lab.machine import wakeful

from cli_site import clean_site, remove_run_dir, trial_json, v6bench  # noqa: F401

pytestmark = [pytest.mark.netns, pytest.mark.usefixtures("clean_site", "remove_run_dir")]


@pytest.mark.parametrize("rate", ["5kfps", "60kfps"])
def test_router_cpu_over_the_traffic_window_agrees_with_its_cpu(rate):
    out = trial_json("--topology", "a", "--mix", "50/50", "--frame-size", "128", "--rate", rate, "--duration", "2")
    if out["lab"]["cpu_plan"]["arrangement"] != "split":
        pytest.skip("one CPU: the DUT's work is the tester's (inline)")
    # The CPUs polled instead of halting while the trial ran (lab/machine/wakeful.py), and the DUT's CPU is still measured.
    assert out["lab"]["cpu_idle"]["idle"] == ("poll" if wakeful.available() else "os")
    (router,) = out["dut"]["routers"]
    (cpu,) = router["cpu"]
    assert router["window_s"] == pytest.approx(out["engine"]["traffic_s"], rel=1e-6)
    threads = router["busy_ratio"]
    own = out["dut"]["dut_cpus"][str(cpu)]
    assert 0 < threads < 1 and own is not None
    # The CPU's busy time holds the router's threads plus what they do not account: wake-ups (IPIs),
    # interrupts, scheduling. Stated tolerance: the threads' share within 15 points of a CPU below it.
    assert threads <= own + 0.02, (threads, own)
    assert own - threads <= 0.15, (threads, own)
    # Over the window, not the whole engine run: the run's own time is at least the window's.
    assert router["run_busy_ns"] >= router["busy_ns"] * 0.98
