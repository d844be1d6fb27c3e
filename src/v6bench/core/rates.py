"""Rates and link speeds: text with units in, frames/s out. The one place
for line rate and for the bytes a frame puts on the wire (the path's line
rate, with fragments and a tunnel, adds up :func:`l1_bytes` per piece,
trial/path.py; the shaper counts them too, lab/emulated/shape.py).

Arithmetic follows RFC 5180 App. A.1 (and RFC 2544 §20): a frame of ``size``
bytes (destination MAC to FCS, RFC 1242 §3.5) occupies ``size + 20`` bytes
on the wire at layer 1 (preamble, start delimiter, inter-frame gap), so

    line_rate_fps = link_bps / (8 × (size + 20)).

Accepted rate texts (case-insensitive, no spaces needed):

- ``20000fps``, ``20kfps``, ``20kpps``, ``1.5Mpps``: frames per second;
- ``50%``: percent of line rate, and line rate is the path's everywhere
  (``--rate``, a latency, mesh or loss test's loads, a recovery's
  overload): the most test frames per direction the lab's path from t1 to
  t2 carries, counting the fragments a frame becomes and a tunnel's
  overhead on its link (trial/path.LabPath.line_fps). Without fragments
  or a tunnel that is :func:`line_rate_fps` of the link speed; with
  them, 100 % is what the path really carries, never a load its
  narrowest link must drop;
- ``30Mbps``, ``1.2Gbps``, ``500kbps``: bits/s at layer 1 of the frames
  as sent; ``30Mbps:l2`` counts layer-2 bits (frame incl. FCS).

Whatever the unit, the engine is given frames/s (engine/spec.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import UsageError

#: Bytes of preamble, start-of-frame delimiter and inter-frame gap per frame.
L1_OVERHEAD_BYTES = 20
#: Bytes of an Ethernet header (MACs and EtherType) and of its frame check sequence.
ETHERNET_HEADER_BYTES = 14
FCS_BYTES = 4
#: An IP packet of N bytes is a frame of N + ETHERNET_BYTES (incl. FCS).
ETHERNET_BYTES = ETHERNET_HEADER_BYTES + FCS_BYTES

_PREFIX = {"": 1.0, "k": 1e3, "m": 1e6, "g": 1e9}

#: Nominal link speeds a lab accepts, in bits/s.
LINK_SPEEDS_BPS = {"100M": 100e6, "1G": 1e9, "10G": 10e9}


def parse_link_speed(text: str) -> float:
    """``100M``, ``1G`` or ``10G`` → bits/s."""
    key = text.strip().upper().removesuffix("BPS").removesuffix("B")
    if key not in LINK_SPEEDS_BPS:
        raise UsageError(f"{text!r} is not one of {', '.join(LINK_SPEEDS_BPS)}", "link_speed")
    return LINK_SPEEDS_BPS[key]


#: The link speeds a port of an external lab may have, in bits/s (10 Mb/s Ethernet to 400GBASE).
PORT_SPEED_RANGE_BPS = (10e6, 400e9)


def parse_port_speed(text: str) -> float:
    """A physical port's speed, ``10M`` to ``400G`` (``2.5G``, ``25G``,
    ``100Gbps``, …) → bits/s: the line rate an external lab's percentages
    and line-rate checks use (RFC 2544 §20)."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt])(?:bps|b/s|b)?\s*", text.lower()) if isinstance(text, str) else None
    if not m:
        raise UsageError(f"expected a speed such as \"1G\", \"25G\" or \"400G\", got {text!r}", "link_speed")
    bps = float(m.group(1)) * {"k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}[m.group(2)]
    low, high = PORT_SPEED_RANGE_BPS
    if not low <= bps <= high:
        raise UsageError(f"{text!r} is outside {format_link_speed(low)}..{format_link_speed(high)}", "link_speed")
    return bps


def format_link_speed(link_bps: float) -> str:
    """``1e9`` → ``1G``, ``2.5e9`` → ``2.5G``, ``1e8`` → ``100M``."""
    for unit, scale in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if link_bps >= scale:
            return f"{link_bps / scale:g}{unit}"
    return f"{link_bps:g} bit/s"


def l1_bytes(frame_size: float) -> float:
    """Bytes a frame of ``frame_size`` (incl. FCS) occupies on the wire at layer 1."""
    return frame_size + L1_OVERHEAD_BYTES


def line_rate_fps(link_bps: float, frame_size: float) -> float:
    """The most frames/s a link of ``link_bps`` carries at ``frame_size`` bytes."""
    return link_bps / (8.0 * l1_bytes(frame_size))


def bit_rates(fps: float, frame_size: float) -> dict:
    """``fps`` frames/s of ``frame_size`` bytes as bits/s at layer 1 and 2."""
    return {"l1_bps": fps * 8 * l1_bytes(frame_size), "l2_bps": fps * 8 * frame_size}


@dataclass(frozen=True)
class Rate:
    """A rate as the user gave it: exactly one unit.

    ``unit`` is ``fps``, ``percent`` (of the path's line rate), ``l1_bps`` or ``l2_bps``;
    ``value`` is in that unit. ``text`` is what the user typed.
    """

    value: float
    unit: str
    text: str

    def __post_init__(self) -> None:
        if self.unit not in ("fps", "percent", "l1_bps", "l2_bps"):
            raise ValueError(f"unknown rate unit {self.unit}")
        if not self.value > 0:
            raise UsageError(f"{self.text!r} must be above zero", "rate")

    @classmethod
    def of_fps(cls, fps: float) -> "Rate":
        """A rate already in frames/s (a method's load): its text is its value."""
        return cls(fps, "fps", f"{fps:g}fps")

    def fps(self, frame_size: float, line_fps: float) -> float:
        """Frames/s at ``frame_size`` bytes; ``line_fps``: the line rate a
        percentage is of [frames/s per direction], the path's (module
        docstring)."""
        if self.unit == "fps":
            return self.value
        if self.unit == "percent":
            return self.value / 100.0 * line_fps
        if self.unit == "l1_bps":
            return line_rate_fps(self.value, frame_size)
        return self.value / (8.0 * frame_size)


_RATE_RE = re.compile(
    r"^(?P<num>\d+(?:\.\d*)?|\.\d+)\s*(?:(?P<pct>%)|(?P<pfx>[kmg]?)(?P<unit>fps|pps|bps|bit/s|b/s)(?P<layer>:l[12])?)$",
    re.IGNORECASE,
)


def parse_rate(text: str) -> Rate:
    """Parses a rate text (module docstring); raises :class:`UsageError`."""
    m = _RATE_RE.match(text.strip())
    if not m:
        raise UsageError(
            f"{text!r} is not a rate; use frames/s (20000fps, 20kpps), percent of line (50%) or bits/s (30Mbps, 30Mbps:l2)",
            "rate")
    value = float(m["num"])
    if m["pct"]:
        if value > 100:
            raise UsageError(f"{text!r} is above line rate (100%)", "rate")
        return Rate(value, "percent", text)
    value *= _PREFIX[m["pfx"].lower()]
    if m["unit"].lower() in ("fps", "pps"):
        if m["layer"]:
            raise UsageError(f"{text!r}: a layer applies to bits/s only", "rate")
        return Rate(value, "fps", text)
    return Rate(value, "l2_bps" if (m["layer"] or "").lower() == ":l2" else "l1_bps", text)


def check_rates(texts: tuple[str, ...], field: str, also: tuple[str, ...] = ()) -> None:
    """Each of ``texts`` is a rate (:func:`parse_rate`) or one of ``also``; errors name ``field``."""
    for text in texts:
        if text not in also:
            try:
                parse_rate(text)
            except UsageError as e:
                raise UsageError(e.message, field) from None
