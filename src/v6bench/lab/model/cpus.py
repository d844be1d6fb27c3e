"""Which CPUs the tester and the DUT use: the lab's CPU arrangement.

Two arrangements (``docs/architecture.md`` has the measurements behind them):

``split`` (default on 2 or more CPUs)
    The DUT's receive-and-forward work runs in the threaded-NAPI kernel
    threads of the routers' interfaces, pinned to DUT CPUs; the tester's
    receive work runs in the tester ports' NAPI threads on the tester's
    receive CPU; all of them at SCHED_FIFO 1 (:data:`FIFO_PRIORITY`).
    The DUT's CPU time is measured per router, and a DUT that cannot keep
    up drops frames at its own input queue, as a router does. Every hop
    between CPUs costs a wake-up.

``inline`` (the only one on 1 CPU; opt-in otherwise)
    Plain veth: a frame is received, forwarded by every router and received
    by the tester inside the sending thread's system call. Lowest latency
    floor, but the DUT's work is billed to the tester's sender, so DUT CPU
    is not measured and a slow DUT shows up as a tester that falls behind
    (``tester_limited``) rather than as DUT loss.

CPU numbers per arrangement and machine size:

==========  ============  ===============  ==============  ===============
arrangement CPUs          tester senders   tester receive  DUT (routers)
==========  ============  ===============  ==============  ===============
split       2             c0               c0              c1
split       3             c0               c1              c2
split       4             c0               c1              c2, c3
split       ≥ 5           c0, c1           c2              the rest
inline      1             c0               c0              c0 (in the sender)
inline      ≥ 2           c0               c1              c0 (in the sender)
==========  ============  ===============  ==============  ===============

Routers take the DUT CPUs in turn (r1 the first, r2 the next, …).

Sending ports share the tester's sender CPUs out (:meth:`CpuPlan.sender_cpus`):
with two sender CPUs, a port sending alone gets both, one sender thread on
each of its two transmit queues (the engine's ``tx_queues``), and in a
bidirectional test each port gets one. So the links of the testers have as
many queues as there are sender CPUs (:attr:`CpuPlan.tester_link_queues`).
"""

from __future__ import annotations

from typing import Any

import os
from dataclasses import asdict, dataclass

from ...core.errors import UsageError

#: Real-time priority of every lab NAPI thread (the lowest FIFO level): a
#: router's receive-and-forward work, like the softirq it replaces, and the
#: tester ports' receive work run before any ordinary task on their CPU
#: (the sender, kernel workers, anything else on the machine), and in turn
#: among themselves, each until its ring is empty.
FIFO_PRIORITY = 1

ARRANGEMENTS = ("split", "inline")


@dataclass(frozen=True)
class CpuPlan:
    """CPU numbers for each kind of work."""

    arrangement: str
    available: tuple[int, ...]
    tester_tx: tuple[int, ...]
    tester_rx: int
    #: The CPUs the routers (the DUT) run on; stored as ``dut`` (lab state, environment).
    dut_cpus: tuple[int, ...]

    @property
    def shared(self) -> bool:
        """True when tester and DUT work can run on the same CPU."""
        return bool(set(self.dut_cpus) & (set(self.tester_tx) | {self.tester_rx}))

    @property
    def tester_rx_priority(self) -> int | None:
        """SCHED_FIFO priority for the engine's receive thread (its
        ``rx_priority``): in ``split`` that of the tester ports' NAPI
        threads on the same CPU, so that neither preempts the other in the
        middle of a batch (at ordinary priority the receive thread was
        preempted at every NAPI wake-up and its AF_XDP rings overflowed,
        bench/log/performance-2026-11.md); ``inline`` has no NAPI threads: none."""
        return FIFO_PRIORITY if self.arrangement == "split" else None

    @property
    def tester_link_queues(self) -> int:
        """Transmit and receive queues of each veth end of a tester's link:
        one a sender CPU, the most senders a port may get."""
        return len(self.tester_tx)

    def sender_cpus(self, index: int, senders: int) -> tuple[int, ...]:
        """The CPUs of the ``index``-th of ``senders`` sending ports, one a
        sender thread: the sender CPUs dealt out in turn, so a port sending
        alone gets them all; with more ports than CPUs they share."""
        if senders >= len(self.tester_tx):
            return (self.tester_tx[index % len(self.tester_tx)],)
        return tuple(c for j, c in enumerate(self.tester_tx) if j % senders == index)

    def router_cpu(self, router_index: int) -> int:
        """The CPU of the ``router_index``-th router (0 for r1)."""
        return self.dut_cpus[router_index % len(self.dut_cpus)]

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["dut"] = d.pop("dut_cpus")
        d["shared"] = self.shared
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "CpuPlan":
        return cls(d["arrangement"], tuple(d["available"]), tuple(d["tester_tx"]), d["tester_rx"], tuple(d["dut"]))


def plan(arrangement: str | None = None, available: tuple[int, ...] | None = None) -> CpuPlan:
    """The plan for ``arrangement`` (default: split where there are 2+ CPUs)
    on the CPUs this process may run on (module docstring)."""
    cpus = tuple(sorted(available if available is not None else os.sched_getaffinity(0)))
    n = len(cpus)
    if arrangement is None:
        arrangement = "split" if n >= 2 else "inline"
    if arrangement not in ARRANGEMENTS:
        raise UsageError(f"{arrangement!r} is not one of {', '.join(ARRANGEMENTS)}", "cpu_arrangement")
    if arrangement == "inline":
        return CpuPlan("inline", cpus, (cpus[0],), cpus[min(1, n - 1)], (cpus[0],))
    if n == 1:
        raise UsageError("split needs 2 CPUs; this machine lets v6bench use 1 (use inline)", "cpu_arrangement")
    if n == 2:
        return CpuPlan("split", cpus, (cpus[0],), cpus[0], (cpus[1],))
    if n <= 4:
        return CpuPlan("split", cpus, (cpus[0],), cpus[1], cpus[2:])
    return CpuPlan("split", cpus, cpus[:2], cpus[2], cpus[3:])
