"""The guest kernel's PVH entry: booting the uncompressed kernel directly.

A bzImage (Linux's x86 boot protocol, Documentation/arch/x86/boot.rst)
decompresses itself before the kernel starts, which under TCG takes
seconds (Debian's xz-compressed 6.1 kernel: about 5 s of a 19-s boot on
Xeon-167). A kernel built with ``CONFIG_PVH`` carries a PVH entry point
(the ELF note ``XEN_ELFNOTE_PHYS32_ENTRY``, type 18, name ``Xen``), and
QEMU's ``-kernel`` boots such an ELF ``vmlinux`` at that entry with its
initrd, skipping the decompression.

:func:`extract` takes the ELF out of a bzImage: the setup header's
``setup_sects`` (offset 0x1f1) places the protected-mode code at
``(setup_sects + 1) × 512`` bytes, and ``payload_offset`` / ``payload_length``
(0x248 / 0x24c, boot protocol 2.08 and later) place the compressed kernel
within it; gzip, xz and bzip2 payloads are read (the standard library's).
"""

from __future__ import annotations

import bz2
import lzma
import struct
import zlib

#: The setup header's magic "HdrS" (offset 0x202) and the fields read.
HEADER_MAGIC = b"HdrS"
SETUP_SECTS_AT = 0x1F1
MAGIC_AT = 0x202
VERSION_AT = 0x206
PAYLOAD_AT = 0x248
#: Boot protocol 2.08: the first with payload_offset and payload_length.
PAYLOAD_VERSION = 0x0208
#: ELF note of the PVH entry (xen/include/public/elfnote.h).
PVH_NOTE_NAME = b"Xen"
PVH_NOTE_TYPE = 18
PT_NOTE = 4


def extract(bzimage: bytes) -> bytes | None:
    """The uncompressed kernel (an ELF) inside ``bzimage``, or None where the
    image is not a bzImage of protocol 2.08 or later, or its payload is in a
    format the standard library does not read (lzma-alone, lzo, lz4, zstd)."""
    if len(bzimage) < PAYLOAD_AT + 8 or bzimage[MAGIC_AT:MAGIC_AT + 4] != HEADER_MAGIC:
        return None
    if struct.unpack_from("<H", bzimage, VERSION_AT)[0] < PAYLOAD_VERSION:
        return None
    setup_sects = bzimage[SETUP_SECTS_AT] or 4  # 0 means 4 (the boot protocol's oldest rule)
    offset, length = struct.unpack_from("<II", bzimage, PAYLOAD_AT)
    start = (setup_sects + 1) * 512 + offset
    payload = bzimage[start:start + length]
    try:
        if payload.startswith(b"\x1f\x8b"):
            out = zlib.decompressobj(wbits=31).decompress(payload)
        elif payload.startswith(b"\xfd7zXZ\x00"):
            out = lzma.LZMADecompressor(format=lzma.FORMAT_XZ).decompress(payload)
        elif payload.startswith(b"BZh"):
            out = bz2.BZ2Decompressor().decompress(payload)
        else:
            return None
    except (lzma.LZMAError, OSError, zlib.error, EOFError):
        return None
    return out if out.startswith(b"\x7fELF") else None


def has_entry(elf: bytes) -> bool:
    """Whether the 64-bit little-endian ELF ``elf`` holds a PVH entry note in
    one of its PT_NOTE segments."""
    if len(elf) < 64 or not elf.startswith(b"\x7fELF\x02\x01"):
        return False
    phoff, = struct.unpack_from("<Q", elf, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", elf, 0x36)
    for k in range(phnum):
        p_type, _, p_offset, _, _, p_filesz = struct.unpack_from("<IIQQQQ", elf, phoff + k * phentsize)
        if p_type == PT_NOTE and _notes_hold_entry(elf[p_offset:p_offset + p_filesz]):
            return True
    return False


def _notes_hold_entry(notes: bytes) -> bool:
    at = 0
    while at + 12 <= len(notes):
        namesz, descsz, note_type = struct.unpack_from("<III", notes, at)
        name = notes[at + 12:at + 12 + namesz].rstrip(b"\x00")
        if name == PVH_NOTE_NAME and note_type == PVH_NOTE_TYPE:
            return True
        at += 12 + _aligned(namesz) + _aligned(descsz)
    return False


def _aligned(n: int) -> int:
    return (n + 3) & ~3
