"""The v6bench command line on a lab site of the tests' own (run directory
and namespace prefix), so a user's lab is never touched; and the check
that a test leaves no namespace or engine process behind."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
import spoiled
from spoiled import unspoiled

PREFIX = f"v6l{os.getpid() % 10000}-"
RUN_DIR = Path(f"/run/v6bench-test-{os.getpid()}")
# Tests of other things than the self-test do not measure the tester first (test_selftest.py does), and
# a default database lands in a directory of the tests', never the repository's results/. Trials that set no
# settle pause 0.1 s after learning instead of the engine's 0.5 s (trial/settle.py): the lab's routers have
# nothing to settle, and about 200 trials of the tier set none.
SETTLE_S = "0.1"
ENV = {**os.environ, "V6BENCH_RUN_DIR": str(RUN_DIR), "V6BENCH_NETNS_PREFIX": PREFIX, "V6BENCH_SELFTEST": "never",
       "V6BENCH_SETTLE_S": SETTLE_S}
WORK_DIR = Path(f"/tmp/v6bench-test-{os.getpid()}")


def v6bench(*args: str, timeout: float = 120, env: dict | None = None) -> subprocess.CompletedProcess:
    WORK_DIR.mkdir(exist_ok=True)
    return subprocess.run([sys.executable, "-m", "v6bench.cli", *args], env={**ENV, **(env or {})}, capture_output=True,
                          text=True, timeout=timeout, cwd=WORK_DIR)


def trial_json(*args: str, timeout: float = 120) -> dict:
    """``v6bench trial ARGS --json``'s result (exit 0 asserted), run again
    while the tester spoiled it (spoiled.py: the tier's one retry rule)."""
    def once() -> dict:
        r = v6bench("trial", *args, "--json", timeout=timeout)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)
    return unspoiled(once)


def namespaces() -> list[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
    return [n for n in out if n.startswith(PREFIX)]


def engine_processes() -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
                if "(v6bench-engine)" in stat and stat.rsplit(")", 1)[1].split()[0] != "Z":  # zombies are dead
                    pids.append(int(entry))
            except OSError:
                pass
    return pids


@pytest.fixture
def clean_site():
    engines_before = set(engine_processes())
    yield
    left = namespaces()
    if left:
        v6bench("lab", "down")
    assert not left, f"namespaces left behind: {left}"
    assert not set(engine_processes()) - engines_before, "an engine process was left running"


@pytest.fixture(scope="module")
def remove_run_dir():
    yield
    shutil.rmtree(RUN_DIR, ignore_errors=True)
    shutil.rmtree(WORK_DIR, ignore_errors=True)


#: How long tshark may take to start capturing: measured 0.28-0.43 s with the machine busy.
CAPTURE_START_S = 20
#: tshark's word that dumpcap has the interface open, its filter set and the file open. "Capturing on"
#: comes earlier, before dumpcap has opened anything (about 40 ms earlier on an idle machine, 2026-11-30):
#: a body started on it could send its first frames before the capture sees any.
CAPTURE_STARTED = "Capture started."


@contextmanager
def capture(netns: str, ifname: str, pcap: Path, count: int, bpf: str | None = None):
    """tshark captures up to ``count`` frames of ``ifname`` in ``netns`` into
    ``pcap`` while the body runs: the body starts once tshark says the capture
    has started (CAPTURE_STARTED; not after a fixed pause, which a loaded
    machine can outlast), and tshark stops by itself 6 s after it started; the
    file is complete when the block ends. A trial the tester spoiled and
    :func:`spoiled.unspoiled` runs again is captured afresh (the file then
    holds the kept trial's frames, within 6 s of its start). Yields a list
    that then holds tshark's last words (frames captured, and dropped if
    any), for the messages of assertions that count frames."""
    cmd = ["ip", "netns", "exec", netns, "tshark", "-q", "-i", ifname, "-a", "duration:6", "-c", str(count), "-w", str(pcap)]
    now: dict = {}

    def start() -> None:
        cap = subprocess.Popen(cmd + (["-f", bpf] if bpf else []), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True)
        said: list[str] = []
        listener = threading.Thread(target=lambda: said.extend(line.strip() for line in cap.stderr), daemon=True)
        listener.start()
        now.update(cap=cap, said=said, listener=listener)
        deadline = time.monotonic() + CAPTURE_START_S
        while not any(CAPTURE_STARTED in line for line in said) and listener.is_alive() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert any(CAPTURE_STARTED in line for line in said), \
            f"tshark did not start capturing on {ifname} in {netns} within {CAPTURE_START_S} s: {said}"

    def end() -> None:
        if "cap" in now:
            now["cap"].wait(timeout=30)
            now["listener"].join(timeout=5)

    def again() -> None:
        if now["cap"].poll() is None:
            now["cap"].terminate()  # tshark closes its file on SIGTERM
        end()
        start()

    last: list[str] = []
    try:
        start()
        with spoiled.before_retry(again):
            yield last
    finally:
        end()
    last.extend(line for line in now["said"] if "captured" in line or "dropped" in line)


def facing(lab, tester: str) -> tuple[str, str]:
    """Namespace and name of the router interface that faces ``tester``'s
    port (interfaces are named ``<node>-<peer>``): where to capture what
    reaches the tester, since with the AF_XDP backend (the default on veth)
    the tester's own interface hands every frame to the engine before any
    capture sees it (docs/engine-spec.md, Backends)."""
    node, peer = lab.node(tester)["interfaces"][0]["name"].split("-", 1)
    return lab.node(peer)["netns"], f"{peer}-{node}"


def tshark_fields(pcap: Path, *fields: str, options: tuple[str, ...] = ()) -> list[list[str]]:
    """The given fields of every frame in ``pcap``, read by tshark."""
    args = ["tshark", "-r", str(pcap), "-T", "fields", *options]
    for f in fields:
        args += ["-e", f]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    return [line.split("\t") for line in out.splitlines() if line.strip()]
