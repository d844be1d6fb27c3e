"""The tester ports' packet I/O: the engine spec's per-port ``backend``
(``docs/engine-spec.md``).

``auto`` (the default) lets the engine take the faster one for the port's
driver: AF_XDP on veth (the emulated lab's tester ports) where the MTU
allows single-buffer XDP and no transmit-stamp check runs, AF_PACKET
otherwise; each port's result says which ran. ``V6BENCH_TESTER_BACKEND``
forces one (``af_packet`` or ``af_xdp``) for every port of every trial and
self-test, e.g. to compare them; a stored self-test made with another
setting is stale (:mod:`v6bench.selftest`).
"""

from __future__ import annotations

import os

from ..errors import UsageError

BACKENDS = ("auto", "af_packet", "af_xdp")
ENV = "V6BENCH_TESTER_BACKEND"


def chosen() -> str:
    """The setting: ``auto`` unless ``V6BENCH_TESTER_BACKEND`` says otherwise."""
    value = os.environ.get(ENV, "").strip() or "auto"
    if value not in BACKENDS:
        raise UsageError(f"{ENV}: {value!r} is not one of {', '.join(BACKENDS)}")
    return value
