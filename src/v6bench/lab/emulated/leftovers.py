"""Incomplete datagrams a router still holds from an earlier trial, and
waiting them out before the next (RFC 2544 §23: the DUT restabilizes
between trials).

A router that reassembles (a NAT's connection tracking reassembles IPv4
fragments before it translates: 464XLAT's PLAT, a stateful NAT64 or
NAT44 after a fragmenting CLAT or link) keeps every datagram whose other
fragments were lost, for ``net.ipv4.ipfrag_time`` (30 s) or
``net.ipv6.ip6frag_time`` (60 s). The next trial inherits them: its
frames reuse the Identifications (the engine's count from 0, RFC 6864
§4.1), join the stale queues and are dropped as overlaps; and once they
fill the reassembly memory (``ipfrag_high_thresh``, 4 MB: some 2,000
datagrams of 1,500 bytes), the kernel drops every new fragment until
they expire. On this machine a throughput search of 1498-B IPv4 frames
through 464XLAT left 2,106 of them in R2 (4,196,176 bytes), and the
next test's preliminary phase then passed 0 of 10,100 frames.

:func:`wait_out` reads what each router holds (``/proc/net/sockstat``
and ``sockstat6``: the kernel's own reassembly and connection tracking's
IPv4 reassembly; connection tracking's IPv6 queues are not shown there)
and waits until none is left, at most the longest reassembly timeout a
router has plus :data:`MARGIN_S`. Nothing sends meanwhile, so they
expire; a router that still holds some then is refused (something else
sends it fragments).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

from ...core.errors import LabError

#: The files read on each router, in order (one ``cat``).
FILES = ("/proc/net/sockstat", "/proc/net/sockstat6", "/proc/sys/net/ipv4/ipfrag_time",
         "/proc/sys/net/ipv6/ip6frag_time")
#: How often a router is read while its datagrams expire [s].
POLL_S = 0.5
#: Beyond the longest reassembly timeout: the kernel's timers fire late by up to a jiffy, and reading takes time [s].
MARGIN_S = 3.0


@dataclass(frozen=True)
class Held:
    """What one router holds: ``datagrams`` incomplete (IPv4 and IPv6), ``bytes`` of memory, and the longer of its
    two reassembly timeouts ``timeout_s``."""

    datagrams: int
    bytes: int
    timeout_s: float


def parse(text: str) -> Held:
    """:class:`Held` from the output of ``cat`` of :data:`FILES` (the ``FRAG:`` and ``FRAG6:`` lines
    ``inuse N memory M``, then the two timeouts)."""
    datagrams = memory = 0
    numbers: list[float] = []
    for line in text.splitlines():
        words = line.split()
        if words[:1] in (["FRAG:"], ["FRAG6:"]):
            fields = dict(zip(words[1::2], words[2::2]))
            datagrams += int(fields["inuse"])
            memory += int(fields["memory"])
        elif len(words) == 1 and words[0].isdigit():
            numbers.append(float(words[0]))
    if len(numbers) != 2:
        raise LabError(f"reading the reassembly queues: expected two timeouts after sockstat, got {text!r}")
    return Held(datagrams, memory, max(numbers))


def wait_out(routers: dict[str, Callable[[], str]], sleep: Callable[[float], None] = time.sleep,
             clock: Callable[[], float] = time.monotonic) -> dict[str, Any] | None:
    """Waits until no router of ``routers`` (name: a reader of :data:`FILES` on it) holds an incomplete
    datagram; None if none held one to begin with, else ``{"routers": {name: {"datagrams", "bytes"}}, "waited_s"}``:
    what each held at first (only those that held any) and how long the wait took [s]. Raises
    :class:`LabError` if some are still held after the longest timeout plus :data:`MARGIN_S`."""
    start = clock()
    first = {name: parse(read()) for name, read in routers.items()}
    held = {name: h for name, h in first.items() if h.datagrams}
    if not held:
        return None
    deadline = start + max(h.timeout_s for h in first.values()) + MARGIN_S
    while held:
        if clock() >= deadline:
            left = ", ".join(f"{name}: {h.datagrams:,}" for name, h in held.items())
            raise LabError(f"incomplete datagrams still held after waiting {clock() - start:.0f} s, past the "
                           f"reassembly timeout ({left}): something else sends the DUT fragments")
        sleep(POLL_S)
        held = {name: h for name in held if (h := parse(routers[name]())).datagrams}
    return {"routers": {name: {"datagrams": h.datagrams, "bytes": h.bytes} for name, h in first.items() if h.datagrams},
            "waited_s": round(clock() - start, 3)}
