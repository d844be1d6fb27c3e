"""IPv6 extension header presets for test traffic (seed 000 §3, Fig. 15,
Table 6): what ``--ext-headers NAME`` puts between the IPv6 header and UDP
of every IPv6 test frame, as the engine's ``ipv6_ext_headers`` list
(``docs/engine-spec.md``). The frame size stays as asked, so the headers
take their bytes from the payload (seed 000 held frames at 1280 bytes).

==========  ==========================================================  =====
preset      headers, in order                                           bytes
==========  ==========================================================  =====
``hbh``     Hop-by-Hop Options (PadN), which every router must read        8
``dst``     Destination Options (PadN)                                     8
``rh0``     Routing type 0, Segments Left 0, the destination's address    24
            (RFC 5095 deprecates acting on RH0; with SL 0 a router
            forwards it as it is)
``srh``     Segment Routing Header (RFC 8754): sent to the router's        40
            address (its SID) with Segments Left 1 and the receiving
            port's address as last segment; the router, with
            ``seg6_enabled``, processes it (End: SL 1 → 0) and forwards
            the frame to that address
``frag``    Fragment, offset 0 and M 0 (an atomic fragment)                 8
``chain``   seed 000's chain: Hop-by-Hop, Routing type 0 (as ``rh0``),    48
            Fragment, Destination Options
``dst20``   20 Destination Options headers                               160
==========  ==========================================================  =====
"""

from __future__ import annotations

from .errors import UsageError

_HBH = {"kind": "hop_by_hop", "len": 8}
_DST = {"kind": "dest_opts", "len": 8}
_FRAG = {"kind": "fragment", "id": 0x76360001}

PRESETS = ("hbh", "dst", "rh0", "srh", "frag", "chain", "dst20")
#: Kinds of header that name the frame's final destination (its UDP checksum covers that address, RFC 8200 §8.1).
ROUTING_KINDS = ("routing0", "srh")


def _chain(name: str, router_sid: str, destination: str) -> list[dict]:
    rh0 = {"kind": "routing0", "addresses": [destination], "segments_left": 0}
    srh = {"kind": "srh", "segments": [destination, router_sid], "segments_left": 1}
    return {"hbh": [_HBH], "dst": [_DST], "rh0": [rh0], "srh": [srh], "frag": [_FRAG],
            "chain": [_HBH, rh0, _FRAG, _DST], "dst20": [_DST] * 20}[name]


def _length(h: dict) -> int:
    """Bytes on the wire of one header of the engine's list."""
    if h["kind"] in ("hop_by_hop", "dest_opts"):
        return h.get("len", 8)
    return 8 + 16 * len(h.get("addresses", h.get("segments", [])))


#: Bytes each preset adds to a frame (the same with any addresses).
LENGTHS = {n: sum(_length(h) for h in _chain(n, "::", "::")) for n in PRESETS}


def check(name: str) -> str:
    if name not in LENGTHS:
        raise UsageError(f"{name!r} is not one of {', '.join(PRESETS)}", "ext_headers")
    return name


def problem(name: str, mix, frame_size: int, min_ipv6_frame: int) -> str | None:
    """Why frames of ``frame_size`` bytes in ``mix`` cannot carry preset
    ``name`` (a known one), or None if they can; ``min_ipv6_frame`` is the
    smallest IPv6 test frame without extension headers."""
    if mix.ipv6_pct == 0:
        return f"the mix {mix} has no IPv6 frames to carry them"
    need = min_ipv6_frame + LENGTHS[name]
    if frame_size < need:
        return (f"{name} needs frames of at least {need} bytes, not {frame_size} "
                f"(IPv6/UDP, the signature and {LENGTHS[name]} bytes of headers)")
    return None


def headers(name: str, router_sid: str | None, destination: str) -> list[dict]:
    """The engine's list for ``name``; ``router_sid`` is the address of the
    first router the frame meets (needed by ``srh``), ``destination`` the
    receiving port's address (no prefix length); an ``srh`` needs a router
    (:func:`v6bench.trial.fit.check_on_topology`)."""
    assert not (check(name) == "srh" and router_sid is None), "srh without a router"
    return _chain(name, router_sid or "::", destination)


def has_routing_header(name: str) -> bool:
    """Whether preset ``name`` carries a routing header (its frames go to the header's addresses)."""
    return any(h["kind"] in ROUTING_KINDS for h in _chain(check(name), "::", "::"))
