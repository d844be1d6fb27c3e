"""The lab's CPUs stay awake while a trial runs.

A CPU with nothing to do goes idle; in a virtual machine idle means the
vCPU halts and gives its time back to the host, and the next wake-up
(the IPI that starts a router's NAPI thread when the sender queues a
frame) waits for the host to run the vCPU again. Measured on a 2-vCPU
guest (bench/log/performance-2026-11.md): the router's median delay fell from about
30 µs to about 20 µs when its CPU polled instead of halting, and the
tester's own floor from 4.2 µs to 4.1 µs. A router's forwarding core does
not sleep between frames either (a NIC's driver polls under load), so a
CPU that polls is the closer model.

The means is the kernel's PM QoS interface: while ``/dev/cpu_dma_latency``
is held open with a request of 0 µs, cpuidle picks only its polling state
on every CPU. The request ends when the file is closed, by the kernel,
also when the process dies: a crash leaves nothing behind. Idle polling
is idle time in ``/proc/stat``, so the DUT's CPU is measured as before
(lab/machine/cpu_window.py).

Where the file is missing or not writable (no cpuidle, no root), trials run
as they would anyway, and the trial's ``lab.cpu_idle`` says so.
"""

from __future__ import annotations

import contextlib
import os
import struct
from typing import Any, Iterator

#: The PM QoS device of the CPU latency request (Documentation/power/pm_qos_interface.rst).
DEVICE = "/dev/cpu_dma_latency"


def available() -> bool:
    """Whether the CPUs can be kept awake here: what self-tests and trials record."""
    return os.access(DEVICE, os.W_OK)


@contextlib.contextmanager
def awake() -> Iterator[dict[str, Any]]:
    """Holds a CPU latency request of 0 µs for the ``with`` block; yields the
    record a trial stores as ``lab.cpu_idle``: ``{"idle": "poll", …}`` when
    held, ``{"idle": "os", "why": …}`` when not."""
    try:
        fd = os.open(DEVICE, os.O_WRONLY)
    except OSError as e:
        yield {"idle": "os", "why": f"{DEVICE}: {e.strerror}"}
        return
    try:
        os.write(fd, struct.pack("i", 0))
        yield {"idle": "poll", "how": f"PM QoS CPU latency request of 0 µs ({DEVICE}) held while the trial ran"}
    finally:
        os.close(fd)
