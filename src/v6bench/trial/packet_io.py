"""The tester ports' packet I/O: the engine spec's per-port ``backend``
(``docs/engine-spec.md``).

``auto`` (the default) lets the engine take the faster one for the port's
driver: AF_XDP on veth (the emulated lab's tester ports) where the MTU
allows single-buffer XDP and no transmit-stamp check runs, AF_PACKET
otherwise; each port's result says which ran. ``V6BENCH_TESTER_BACKEND``
forces one (``af_packet`` or ``af_xdp``) for every port of every trial and
self-test, e.g. to compare them; a stored self-test made with another
setting is stale (:mod:`v6bench.selftest`).

``xdp_live`` sends from an XDP program the kernel runs in a loop (the
engine's in-kernel sender) and receives as ``af_xdp``. The engine takes
it only for a port that sends one UDP stream, whole, at one constant
rate, from one template, on veth; with the setting ``xdp_live`` the other
ports of a trial (several streams, ICMP Echo, fragments, a rate step, a
walk such as RFC 4814's ports, receive only) run ``af_xdp``
(:func:`settle`).
"""

from __future__ import annotations

import os
from dataclasses import replace

from ..core.errors import UsageError
from ..engine.spec import Port, Stream, TrialSpec

BACKENDS = ("auto", "af_packet", "af_xdp", "xdp_live")
ENV = "V6BENCH_TESTER_BACKEND"


def chosen() -> str:
    """The setting: ``auto`` unless ``V6BENCH_TESTER_BACKEND`` says otherwise."""
    value = os.environ.get(ENV, "").strip() or "auto"
    if value not in BACKENDS:
        raise UsageError(f"{ENV}: {value!r} is not one of {', '.join(BACKENDS)}")
    return value


def live_fits(port: Port, streams: tuple[Stream, ...]) -> bool:
    """Whether the engine's in-kernel sender can send ``port``'s traffic:
    it sends, one UDP stream sent whole, at one constant rate, from one
    template (no walk: RFC 4814's ports and a table's destinations change
    from frame to frame, ``docs/engine-spec.md``, "Walks")."""
    mine = [s for s in streams if s.tx_port == port.name]
    return (port.sends and port.rate_step is None and len(mine) == 1
            and mine[0].protocol in (None, "udp") and mine[0].fragment_mtu is None and mine[0].walk is None)


def settle(spec: TrialSpec) -> TrialSpec:
    """Resolves ``xdp_live`` per port of an engine spec: kept where
    :func:`live_fits`, ``af_xdp`` elsewhere. A port given several senders
    (``tx_queues``) keeps them on ``auto`` and ``af_xdp``; ``af_packet``
    and ``xdp_live`` send from one thread a port, so there it gets one,
    on its first CPU."""
    def one(port: Port) -> Port:
        if port.backend == "xdp_live" and not live_fits(port, spec.streams):
            port = replace(port, backend="af_xdp")
        if (port.tx_queues or 1) > 1 and port.backend in ("af_packet", "xdp_live"):
            first = port.tx_cpu[0] if isinstance(port.tx_cpu, tuple) else port.tx_cpu
            port = replace(port, tx_queues=None, tx_cpu=first)
        return port
    return spec.with_ports(one)
