"""A stop signal stops the command even when Python lost its KeyboardInterrupt."""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest

from v6bench import engine, stopping

# An engine stand-in: reads its spec, then waits; SIGINT makes it note the signal and exit as the engine does.
FAKE_ENGINE = """#!/bin/sh
trap 'echo stopped > "$MARK"; exit 130' INT
cat > /dev/null
i=0
while [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
"""


@pytest.fixture
def handlers():
    saved = {s: signal.getsignal(s) for s in stopping.SIGNALS}
    stopping.install()
    yield
    stopping._requested.clear()
    for s, h in saved.items():
        signal.signal(s, h)


@pytest.fixture
def fake_engine(tmp_path, monkeypatch):
    path = tmp_path / "engine"
    path.write_text(FAKE_ENGINE)
    path.chmod(0o755)
    mark = tmp_path / "mark"
    monkeypatch.setenv("V6BENCH_ENGINE", str(path))
    monkeypatch.setenv("MARK", str(mark))
    return mark


def test_a_signal_raises_keyboard_interrupt_and_is_remembered(handlers):
    assert not stopping.requested()
    with pytest.raises(KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(1)  # the handler runs here
    assert stopping.requested()
    with pytest.raises(KeyboardInterrupt):
        stopping.check()


def test_a_lost_interrupt_still_stops_the_engine(handlers, fake_engine):
    def lose_it() -> None:  # what Python does to a KeyboardInterrupt raised in a weakref callback or a fork hook
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(1)
        except KeyboardInterrupt:
            pass

    lose_it()
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        engine.run_trial({"duration_s": 30})
    assert time.monotonic() - started < 3
    running = subprocess.run(["pgrep", "-f", os.environ["V6BENCH_ENGINE"]], capture_output=True)
    assert running.returncode == 1, "the engine was left running"


def test_without_a_stop_the_wait_runs_to_its_time_out(fake_engine):
    started = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        engine.run_trial({}, timeout_s=1.2)
    assert 1.1 < time.monotonic() - started < 4
    assert fake_engine.read_text() == "stopped\n"
