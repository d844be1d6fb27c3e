"""The lab and `v6bench trial` from the command line, as root, on a lab
site of the tests' own (run directory and namespace prefix), so a user's
lab is never touched. Every test checks that nothing is left behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

import cli_site
from cli_site import ENV, PREFIX, RUN_DIR, clean_site, engine_processes, namespaces, remove_run_dir, trial_json, v6bench  # noqa: F401

pytestmark = [pytest.mark.netns, pytest.mark.usefixtures("clean_site", "remove_run_dir")]


def one_line_error(p: subprocess.CompletedProcess, text: str) -> None:
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and text in lines[0], p.stderr


@pytest.mark.parametrize("topology,routers", [("p2p", 0), ("a", 1), ("b", 2), ("chain:3", 3)])
def test_lab_up_status_trial_down(topology, routers):
    up = v6bench("lab", "up", "--topology", topology, "--json")
    assert up.returncode == 0, up.stderr
    st = json.loads(v6bench("lab", "status", "--json").stdout)
    assert st["up"] and st["topology"] == topology
    names = [n["name"] for n in st["nodes"]]
    assert names == ["t1"] + [f"r{k}" for k in range(1, routers + 1)] + ["t2"]
    for n in st["nodes"]:
        assert n["role"] == ("tester" if n["name"].startswith("t") else "dut")
        assert n["netns"] == PREFIX + n["name"] and n["netns"] in namespaces()
        for i in n["interfaces"]:
            assert set(i) >= {"name", "mac", "ipv4", "ipv6"}
    # Every interface's NAPI thread (split arrangement) runs at SCHED_FIFO 1, pinned to its CPU.
    threads = st["napi_threads"]
    split = len(os.sched_getaffinity(0)) >= 2  # the default arrangement there
    assert len(threads) == (sum(len(n["interfaces"]) for n in st["nodes"]) if split else 0)
    for t in threads:
        assert os.sched_getscheduler(t["pid"]) == os.SCHED_FIFO and os.sched_getparam(t["pid"]).sched_priority == 1, t
        assert os.sched_getaffinity(t["pid"]) == {t["cpu"]} and t["policy"] == "fifo", t
    # A second lab is refused while this one is up.
    one_line_error(v6bench("lab", "up"), "a lab is already up")
    # A bidirectional 90/10 trial: exact counts per stream, both directions.
    r = trial_json("--mix", "90/10", "--frame-size", "128", "--rate", "2000fps", "--duration", "1", "--bidirectional")
    for key in ("intended_fps", "offered_fps", "tx_frames", "rx_frames", "lost_frames", "loss_ratio", "tester_limited"):
        assert key in r
    assert r["intended_fps"] == 4000 and r["tx_frames"] == 4000
    # The pause after learning it had: the tests' default (cli_site.SETTLE_S), measured in the engine's learning time.
    assert r["settle_s"] == float(cli_site.SETTLE_S) <= r["engine"]["learning_s"] < float(cli_site.SETTLE_S) + 3, r["engine"]
    by = {(s["direction"], s["ip_version"]): s for s in r["streams"]}
    assert {k: s["tx_frames"] for k, s in by.items()} == {
        ("t1->t2", 4): 1800, ("t1->t2", 6): 200, ("t2->t1", 4): 1800, ("t2->t1", 6): 200}
    for s in r["streams"]:
        assert s["rx_frames"] + s["lost_frames"] == s["tx_frames"]
        assert s["lost_frames"] <= s["tx_frames"] * 0.01  # 2 kfps: nothing should be lost
        assert set(s["latency_ns"]) >= {"min", "mean", "p50", "p99", "p999", "max"}
        assert 0 < s["latency_ns"]["min"] <= s["latency_ns"]["p50"] <= s["latency_ns"]["max"] < 1e9
    assert [x["name"] for x in r["dut"]["routers"]] == [f"r{k}" for k in range(1, routers + 1)]
    for x in r["dut"]["routers"]:
        assert x["busy_ns"] > 0  # the router's NAPI threads did the forwarding
    assert r["lab"]["topology"] == topology and r["lab"]["shared_machine"] is True
    assert [(t["ifname"], t["policy"], t["priority"]) for t in r["lab"]["napi_threads"]] == \
        [(t["ifname"], "fifo", 1) for t in threads]  # the result says how the receive work was scheduled
    down = v6bench("lab", "down")
    assert down.returncode == 0 and not namespaces()
    assert json.loads(v6bench("lab", "status", "--json").stdout)["up"] is False


def test_temporary_lab_is_built_and_removed():
    p = v6bench("trial", "--rate", "1kfps", "--duration", "1", "--mix", "0/100", "--frame-size", "84")
    assert p.returncode == 0, p.stderr
    # The tester's status either way: "no", or its reasons (a host stall: once 998 of 1,000 frames/s offered).
    assert "IPv6" in p.stdout and "temporary lab" in p.stdout, p.stdout
    assert "tester_limited: no" in p.stdout or "TESTER LIMITED: this trial says nothing" in p.stdout, p.stdout
    assert not namespaces()


def test_inline_arrangement_counts_exactly():
    p = v6bench("trial", "--cpu-arrangement", "inline", "--rate", "5kfps", "--duration", "1", "--json")
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["lab"]["cpu_plan"]["arrangement"] == "inline"
    assert r["tx_frames"] == 5000 and r["rx_frames"] == 5000
    assert all(x["busy_ns"] is None for x in r["dut"]["routers"])  # not separable inline


@pytest.mark.parametrize("args,text", [
    (["--topology", "c"], "unknown topology"),
    (["--mix", "90/20"], "--mix"),
    (["--frame-size", "80"], "84..9216 for IPv4 and IPv6"),
    (["--rate", "101%"], "above line rate"),
    (["--rate", "900kfps", "--frame-size", "128"], "above line rate"),
    (["--link-speed", "2G"], "--link-speed"),
    (["--frame-size", "2000", "--icmp-echo", "far"], "do not fit the path MTU"),  # larger UDP frames are fragmented
    (["--mtu", "100"], "all=100 leaves no link for IPv6"),
    (["--mtu", "r1-r2=500"], "this topology has no link r1-r2; its links are r1-t2, t1-r1"),  # a lab that cannot be built
])
def test_bad_trial_input_is_one_line_exit_2_and_leaves_nothing(args, text):
    one_line_error(v6bench("trial", "--duration", "1", *args), text)


def test_trial_options_must_match_the_lab_that_is_up():
    assert v6bench("lab", "up", "--topology", "p2p").returncode == 0
    one_line_error(v6bench("trial", "--topology", "b", "--duration", "1"), "the lab that is up has topology p2p")
    assert v6bench("lab", "down").returncode == 0


def test_stale_namespaces_and_unfinished_builds_are_cleaned():
    subprocess.run(["ip", "netns", "add", PREFIX + "r1"], check=True)
    p = v6bench("lab", "up", "--topology", "a")
    assert p.returncode == 0 and "removed a stale lab" in p.stderr
    # A build that "died": state says building, by a pid that is gone.
    state = RUN_DIR / "lab.json"
    d = json.loads(state.read_text())
    d["status"] = "building"
    state.write_text(json.dumps(d))
    p = v6bench("trial", "--rate", "1kfps", "--duration", "1")
    assert p.returncode == 0 and "a build by pid" in p.stderr
    assert "temporary lab" in p.stdout and not namespaces()


def _wait_for(pred, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.1)
    return False


def test_ctrl_c_stops_the_trial_and_removes_the_temporary_lab():
    proc = subprocess.Popen([sys.executable, "-m", "v6bench.cli", "trial", "--duration", "30", "--rate", "1kfps"],
                            env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert _wait_for(lambda: len(engine_processes()) > 0 and len(namespaces()) == 3, 15)
        time.sleep(1.5)  # into the traffic phase
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert "interrupted" in err
    assert not namespaces()


def test_a_killed_trial_leaves_a_stale_lab_that_the_next_command_removes():
    proc = subprocess.Popen([sys.executable, "-m", "v6bench.cli", "trial", "--duration", "30", "--rate", "1kfps"],
                            env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    assert _wait_for(lambda: len(engine_processes()) > 0 and len(namespaces()) == 3, 15)
    proc.kill()
    proc.wait()
    assert namespaces()  # the crash left the lab
    st = json.loads(v6bench("lab", "status", "--json").stdout)
    assert st["up"] is False  # a temporary lab whose owner is gone is no lab
    p = v6bench("lab", "up")
    assert p.returncode == 0 and "temporary lab of pid" in p.stderr
    assert _wait_for(lambda: not engine_processes(), 2), "the crashed trial's engine still runs"
    assert v6bench("lab", "down").returncode == 0


def test_a_busy_lab_names_its_holder():
    # The trial outlasts the checks whatever the machine's load (a 3-s trial could end under four command starts
    # on a busy machine), then Ctrl-C ends it.
    proc = subprocess.Popen([sys.executable, "-m", "v6bench.cli", "trial", "--duration", "30", "--rate", "1kfps"],
                            env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert _wait_for(lambda: len(engine_processes()) > 0, 15)
        for args in (["lab", "down"], ["lab", "up"], ["lab", "down"]):  # twice: a refusal must not erase the name
            one_line_error(v6bench(*args), f"the lab is busy: pid {proc.pid} (trial)")
        assert "temporary, in use" in v6bench("lab", "status").stdout
        assert proc.poll() is None, "the trial still ran while every check was made"
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 130
    assert not namespaces()
