"""t2's streams in a bidirectional trial through a DUT that keeps state
(NAT44, stateful NAT64, a connection-tracking firewall): each answers a
stream of t1's on the connections its frames opened, as RFC 9693's
Responder does (§4: the Tester "uses the 4-tuples it learned" from the
translated frames; siitperf's ``reverse`` and ``both`` directions).

For each of t1's streams t2 sends one reply stream, named as the t1
stream with its ports swapped (``ipv6-t2-t1`` answers ``ipv6-t1-t2``),
of the same share. It is sent in the family t1's frames arrive in at t2,
at the size they arrive (across a NAT64, IPv4 20 bytes shorter than the
IPv6 sent), and arrives at t1 as t1's family. Its frame ``k`` goes to
the ``k``-th connection the preliminary phase learned from the t1
stream (to its source address and port as they arrived at t2, from its
destination address and port: engine ``walk.reply_to``), so no address
or port the DUT chose is guessed.

A reply stream is built before the phase with a placeholder
(:data:`PENDING` and the t1 stream's name) that the engine refuses as
not base64 if it were ever sent; :func:`fill` puts the records the
phase learned in its place.
"""

from __future__ import annotations

import base64
from dataclasses import replace

from ..core.errors import UsageError
from ..engine.spec import Stream, TrialSpec, Walk
from ..lab.model import translation

#: A reply stream's ``walk.reply_to`` before the phase: this, then the name of the t1 stream it answers.
PENDING = "learn:"


def reply_name(name: str) -> str:
    """The reply stream's name for t1's stream ``name`` (its ports swapped)."""
    return name.replace("-t1-t2", "-t2-t1")


def replies(t1_streams: list[Stream]) -> list[Stream]:
    """t2's reply streams, one for each of ``t1_streams`` (module docstring)."""
    out = []
    for s in t1_streams:
        if s.fragment_mtu is not None:
            raise UsageError(f"{s.frame_size}-byte frames are cut at the source; t2 answers the connections "
                             "of whole frames (a smaller frame size)", "frame_size")
        arrives = s.rx_ip_version or s.ip_version
        size = s.frame_size + translation.size_change(s.ip_version, arrives)
        out.append(Stream(reply_name(s.name), "t2", "t1", arrives, size, s.share,
                          walk=Walk(reply_to=PENDING + s.name),
                          rx_ip_version=s.ip_version if arrives != s.ip_version else None))
    return out


def records(text: str, ip_version: int) -> int:
    """How many connections ``text`` (a version byte, then records of two
    IPv``ip_version`` addresses and two ports, engine/src/tuples.rs) holds."""
    return (len(base64.b64decode(text)) - 1) // (2 * (4 if ip_version == 4 else 16) + 4)


def _answers(s: Stream) -> str | None:
    """The name of the t1 stream ``s`` answers, if it waits for its 4-tuples."""
    to = s.walk.reply_to if s.walk is not None else None
    return to[len(PENDING):] if to is not None and to.startswith(PENDING) else None


def answered(spec: TrialSpec) -> dict[str, str]:
    """The t1 stream each reply stream of ``spec`` answers, by reply name."""
    return {s.name: t1 for s in spec.streams if (t1 := _answers(s)) is not None}


def fill(spec: TrialSpec, learned: dict[str, str]) -> TrialSpec:
    """``spec`` with each reply stream walking the records ``learned``
    (base64, by t1 stream name) from the stream it answers."""
    wanted = answered(spec)
    missing = sorted(set(wanted.values()) - set(learned))
    if missing:
        raise ValueError(f"no connections learned from {', '.join(missing)}")
    return replace(spec, streams=tuple(
        replace(s, walk=replace(s.walk, reply_to=learned[wanted[s.name]])) if s.walk is not None and s.name in wanted
        else s for s in spec.streams))
