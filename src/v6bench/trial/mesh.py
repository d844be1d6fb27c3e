"""Mesh traffic among a ``mesh:N`` lab's tester ports (RFC 2889 §5.1,
seed 004 §2.3–2.4).

- ``partial``: N − 1 senders (t1 … tN−1) to one receiver (tN), seed 004
  Fig. 4. Each sender offers the rate; the receiver's port gets (N − 1)
  times it, so above 1/(N − 1) of line rate its router port is
  overloaded (with ``--shape`` it really congests, as a wire would).
- ``full``: every port sends to every other (RFC 2889 §5.1.3). A port's
  frames go to the other ports in a fixed round-robin order, starting
  with the next port (t1: t2, t3, …, tN, t2, …), each family's share
  interleaved per destination; every port offers the rate and receives it.

A *flow* is one (sender, receiver, IP version): one engine stream, with its
own ``tx_frames``, ``rx_frames`` and ``lost_frames``. Every sender's frame
0 is due at the same instant (the engine's common start); the trial
checks they all started within 1 % of the trial time (RFC 2889 §5.1.3)
from each port's ``first_lag_ns``.
"""

from __future__ import annotations

from typing import Any

from ..core.errors import UsageError
from ..core.frames import check_mesh_pattern
from ..lab.model.topology import parse_topology

#: Largest spread of the senders' starts, as a share of the trial time (RFC 2889 §5.1.3).
START_SPREAD_RATIO = 0.01


def testers(topology: str) -> list[str]:
    """The tester ports of a ``mesh:N`` topology, t1 … tN."""
    if not topology.startswith("mesh:"):
        raise UsageError(f"mesh traffic needs a mesh:N topology (N tester ports on one router), not topology {topology}", "mesh")
    return sorted((n.name for n in parse_topology(topology).testers), key=lambda t: int(t[1:]))


def flows(topology: str, pattern: str) -> list[tuple[str, str]]:
    """(sender, receiver) pairs in each sender's round-robin order."""
    ports = testers(topology)
    if pattern == "partial":
        return [(src, ports[-1]) for src in ports[:-1]]
    if pattern == "full":
        n = len(ports)
        return [(ports[i], ports[(i + k) % n]) for i in range(n) for k in range(1, n)]
    check_mesh_pattern(pattern)
    raise AssertionError(f"a pattern of MESH_PATTERNS without its flows: {pattern}")


def senders(topology: str, pattern: str) -> list[str]:
    seen: list[str] = []
    for src, _ in flows(topology, pattern):
        if src not in seen:
            seen.append(src)
    return seen


def start_spread(engine_result: dict[str, Any], duration_s: float) -> tuple[float, str | None]:
    """The latest sender start after the common start [s], and why the
    trial is the tester's if that is more than 1 % of ``duration_s``."""
    lags = [p["tx"]["first_lag_ns"] for p in engine_result["ports"] if p.get("tx")]
    spread_s = max(lags, default=0) / 1e9
    if spread_s > START_SPREAD_RATIO * duration_s:
        return spread_s, (f"the mesh's senders started {spread_s * 1e3:.1f} ms apart, more than "
                          f"{START_SPREAD_RATIO:.0%} of the {duration_s:g}-s trial (RFC 2889 §5.1.3)")
    return spread_s, None
