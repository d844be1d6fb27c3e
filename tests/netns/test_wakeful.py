"""The CPU latency request that keeps the lab's CPUs polling while a trial
runs (lab/machine/wakeful.py): held inside the block, gone after it, also when the
block raises; a machine without the device runs trials as they are."""

from __future__ import annotations

import os
import struct

import pytest

from v6bench.lab.machine import wakeful

pytestmark = pytest.mark.netns


def current_us() -> int:
    """The kernel's aggregate CPU latency request [µs] (reading the device gives it)."""
    fd = os.open(wakeful.DEVICE, os.O_RDONLY)
    try:
        return struct.unpack("i", os.read(fd, 4))[0]
    finally:
        os.close(fd)


@pytest.mark.skipif(not wakeful.available(), reason="no PM QoS CPU latency device here")
def test_the_request_is_held_in_the_block_and_dropped_after_it():
    before = current_us()
    if before == 0:
        pytest.skip("another process holds a 0-µs request already")
    with wakeful.awake() as record:
        assert record["idle"] == "poll" and current_us() == 0
    assert current_us() == before
    with pytest.raises(RuntimeError):
        with wakeful.awake():
            raise RuntimeError("a trial failed")
    assert current_us() == before


def test_without_the_device_trials_run_as_they_are(monkeypatch):
    monkeypatch.setattr(wakeful, "DEVICE", "/nonexistent/cpu_dma_latency")
    assert not wakeful.available()
    with wakeful.awake() as record:
        assert record["idle"] == "os" and "No such file" in record["why"]
