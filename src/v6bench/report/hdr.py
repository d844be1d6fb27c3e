"""Reads the engine's latency histograms: HdrHistogram V2, deflate-compressed,
base64 (``export_histograms``, docs/engine-spec.md).

The format is HdrHistogram's own ("V2 compressed encoding"): a big-endian
header ``cookie 0x1c849314, length`` (0x1c849304 with bit 4 set: 8-byte
words) and a zlib stream holding ``cookie
0x1c849313, payload length, normalizing index offset, significant digits,
lowest and highest trackable value, int-to-double ratio`` and then the
counts, each a ZigZag LEB128 varint, a negative one being a run of that
many empty buckets. :func:`decode` returns the non-empty buckets as
(value_ns, count): the value is the bucket's lowest value, and every value
in the bucket is equal to it within the histogram's precision (3
significant digits in the engine: ≤ 0.1 %).
"""

from __future__ import annotations

import base64
import struct
import zlib

COMPRESSED_COOKIE = 0x1C849304
ENCODING_COOKIE = 0x1C849303
_HEADER = struct.Struct(">iiiiqqd")


def _varints(data: bytes, start: int, end: int):
    i = start
    while i < end:
        value = shift = 0
        for k in range(9):
            b = data[i]
            i += 1
            if k == 8:  # the ninth byte carries 8 bits
                value |= b << shift
                break
            value |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
        yield (value >> 1) ^ -(value & 1)


def decode(text: str) -> list[tuple[int, int]]:
    """The non-empty buckets of one histogram as (lowest value, count), by value.
    Raises ValueError on anything but V2 compressed encoding."""
    raw = base64.b64decode(text)
    cookie, length = struct.unpack_from(">ii", raw)
    if cookie & ~0xF0 != COMPRESSED_COOKIE:
        raise ValueError(f"not an HdrHistogram V2 compressed histogram (cookie {cookie:#x})")
    data = zlib.decompress(raw[8:8 + length])
    cookie, payload_len, offset, digits, lowest, _highest, _ratio = _HEADER.unpack_from(data)
    if cookie & ~0xF0 != ENCODING_COOKIE:
        raise ValueError(f"not an HdrHistogram V2 encoding (cookie {cookie:#x})")
    if offset != 0:
        raise ValueError("normalized (shifted) histograms are not supported")
    sub_bucket_count = 1 << (2 * 10 ** digits - 1).bit_length()
    half_magnitude = sub_bucket_count.bit_length() - 2
    half_count = sub_bucket_count // 2
    unit_magnitude = max(lowest, 1).bit_length() - 1
    out = []
    index = 0
    for c in _varints(data, _HEADER.size, _HEADER.size + payload_len):
        if c < 0:
            index += -c
            continue
        if c:
            bucket = (index >> half_magnitude) - 1
            sub = (index & (half_count - 1)) + half_count
            if bucket < 0:
                sub -= half_count
                bucket = 0
            out.append((sub << (bucket + unit_magnitude), c))
        index += 1
    return out


def merge(histograms: list[list[tuple[int, int]]]) -> list[tuple[int, int]]:
    """Sum of histograms with the same bucket layout."""
    total: dict[int, int] = {}
    for h in histograms:
        for v, c in h:
            total[v] = total.get(v, 0) + c
    return sorted(total.items())
