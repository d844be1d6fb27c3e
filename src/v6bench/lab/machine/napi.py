"""veth receive work in pinnable kernel threads (threaded NAPI).

On veth a frame is normally received in the sender's own softirq: the
router's forwarding would run on the tester's CPU and be billed to it. When
the receiving veth end has NAPI, the frame is queued (a 256-frame ring) and
received by that end's NAPI poll instead; with threaded NAPI the poll runs in
a kernel thread ``napi/<ifname>-<id>`` that can be pinned to a CPU and whose
CPU time is the receive-and-forward work of that interface.

veth gives a frame to NAPI only if the receiving end has GRO enabled (which
creates its NAPI context) and the sending end does not offer TSO, or the
receiver has UDP GRO forwarding (``rx-udp-gro-forwarding``). v6bench turns
GRO on and TSO off on every lab veth end and leaves UDP GRO forwarding off,
so test frames are never merged: each is received, forwarded and counted as
one frame, as on a router's NIC.
"""

from __future__ import annotations

from typing import Any

import errno
import glob
import os
from dataclasses import dataclass

from ...core.errors import LabError
from . import nsctl


def threads() -> dict[int, str]:
    """PID → comm of every ``napi/…`` kernel thread."""
    out = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/comm") as f:
                comm = f.read().strip()
        except OSError:
            continue
        if comm.startswith("napi/"):
            out[int(entry)] = comm
    return out


def _enable(ifname: str) -> str:
    try:
        nsctl.ethtool_set(ifname, nsctl.ETHTOOL_STSO, False)
    except OSError as e:
        # A veth whose peer has an XDP program (an AF_XDP tester port, docs/engine-spec.md)
        # loses TSO from its settable features: it is off already, as wanted.
        if e.errno != errno.EOPNOTSUPP or nsctl.ethtool_get(ifname, nsctl.ETHTOOL_GTSO):
            raise
    nsctl.ethtool_set(ifname, nsctl.ETHTOOL_SGRO, True)
    nsctl.write_file(f"/sys/class/net/{ifname}/threaded", "1")
    return nsctl.read_file(f"/sys/class/net/{ifname}/threaded")


@dataclass(frozen=True)
class NapiThread:
    """A NAPI kernel thread of one interface (one a receive queue), pinned to ``cpu``."""

    netns: str
    ifname: str
    pid: int
    cpu: int


def thread_record(node: str, netns: str, name: str, pid: int, cpu: int | None, policy: str = "other",
                  priority: int = 0) -> dict[str, Any]:
    """A thread whose CPU time is a node's work, as a lab keeps it (``LabState.napi``): a NAPI thread
    (``name``: its interface; ``policy`` ``fifo``), or a translator's or a data plane's (``other``)."""
    return {"node": node, "netns": netns, "ifname": name, "pid": pid, "cpu": cpu, "policy": policy,
            "priority": priority}


def enable_threaded(netns: str, ifname: str, cpu: int, known: dict[int, str] | None = None) -> list[NapiThread]:
    """Turns ``ifname`` (up, in ``netns``) into a NAPI receiver whose kernel
    threads, one a receive queue, run on ``cpu``. The caller must hold the
    lab lock: the threads are recognised as the ``napi/<ifname>-`` threads
    that appear. ``known``: the threads (:func:`threads`) from before the
    interface was last brought up, for an interface already threaded whose
    threads the kernel created when it came up again (after a reset);
    default: now."""
    before = threads() if known is None else known
    state, queues = nsctl.run_in(netns, lambda: (_enable(ifname), len(glob.glob(f"/sys/class/net/{ifname}/queues/rx-*"))))
    if state not in ("1", "enabled"):
        raise LabError(f"{netns}/{ifname}: threaded NAPI not enabled (threaded={state})")
    prefix = f"napi/{ifname}-"[:15]
    new = sorted(pid for pid, comm in threads().items() if pid not in before and comm.startswith(prefix))
    if len(new) != max(queues, 1):
        raise LabError(f"{netns}/{ifname}: expected {max(queues, 1)} new NAPI thread(s), one a receive queue, found {len(new)}")
    out = []
    for pid in new:
        try:
            os.sched_setaffinity(pid, {cpu})
        except OSError as e:
            raise LabError(f"{netns}/{ifname}: cannot pin NAPI thread {pid} to CPU {cpu}: {e}") from e
        out.append(NapiThread(netns, ifname, pid, cpu))
    return out


def cpu_time_ns(pid: int) -> int | None:
    """Time ``pid`` has run on a CPU, in ns (``/proc/PID/schedstat``); None if gone."""
    try:
        with open(f"/proc/{pid}/schedstat") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None
