"""The guest kernel's PVH entry (lab/vm/pvh.py): the ELF out of a bzImage,
and its entry note found as readelf finds it."""

from __future__ import annotations

import bz2
import gzip
import lzma
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from v6bench.lab.vm import pvh


def _elf(note_type: int) -> bytes:
    """A 64-bit ELF with one PT_NOTE segment: a "GNU" note, then a "Xen" note of ``note_type``."""
    def note(name: bytes, kind: int, desc: bytes) -> bytes:
        name += b"\x00"
        pad = lambda b: b + b"\x00" * (-len(b) % 4)  # noqa: E731
        return struct.pack("<III", len(name), len(desc), kind) + pad(name) + pad(desc)
    notes = note(b"GNU", 3, b"\x01\x02\x03\x04\x05") + note(b"Xen", note_type, struct.pack("<Q", 0x1000850))
    ehdr_size, phdr_size = 64, 56
    ident = b"\x7fELF\x02\x01\x01" + b"\x00" * 9
    ehdr = ident + struct.pack("<HHIQQQIHHHHHH", 2, 62, 1, 0x1000000, ehdr_size, 0, 0, ehdr_size, phdr_size, 1, 64, 0, 0)
    phdr = struct.pack("<IIQQQQQQ", pvh.PT_NOTE, 4, ehdr_size + phdr_size, 0, 0, len(notes), len(notes), 4)
    return ehdr + phdr + notes


def _bzimage(payload: bytes, version: int = 0x020F, setup_sects: int = 3) -> bytes:
    """A bzImage's layout around ``payload``: the setup sectors with the header's fields, then the
    protected-mode code, the payload 100 bytes into it."""
    setup = bytearray((setup_sects + 1) * 512)
    setup[pvh.SETUP_SECTS_AT] = setup_sects
    setup[pvh.MAGIC_AT:pvh.MAGIC_AT + 4] = pvh.HEADER_MAGIC
    struct.pack_into("<H", setup, pvh.VERSION_AT, version)
    struct.pack_into("<II", setup, pvh.PAYLOAD_AT, 100, len(payload))
    return bytes(setup) + b"\x90" * 100 + payload + b"\x00" * 64


@pytest.mark.parametrize("compress", [gzip.compress, lzma.compress, bz2.compress], ids=["gzip", "xz", "bzip2"])
def test_the_elf_inside_a_bzimage_is_taken_out_whatever_the_stdlib_compression(compress):
    elf = _elf(pvh.PVH_NOTE_TYPE)
    assert pvh.extract(_bzimage(compress(elf))) == elf
    assert pvh.has_entry(elf)


def test_what_is_not_a_readable_bzimage_or_has_no_entry_is_said_so():
    elf = _elf(pvh.PVH_NOTE_TYPE)
    assert pvh.extract(_bzimage(lzma.compress(elf), version=0x0207)) is None  # before payload_offset
    assert pvh.extract(_bzimage(b"\x28\xb5\x2f\xfd" + elf)) is None  # zstd: not read
    assert pvh.extract(_bzimage(lzma.compress(b"not an ELF"))) is None
    assert pvh.extract(_bzimage(lzma.compress(elf))[:-200]) is None  # cut short
    assert pvh.extract(elf) is None
    assert not pvh.has_entry(_elf(17)) and not pvh.has_entry(b"\x7fELF\x01\x01" + bytes(60))


@pytest.mark.skipif(shutil.which("readelf") is None, reason="readelf (binutils) not installed")
@pytest.mark.parametrize("note_type", [pvh.PVH_NOTE_TYPE, 17])
def test_the_entry_is_found_where_readelf_lists_it(tmp_path, note_type):
    f = tmp_path / "vmlinux"
    f.write_bytes(_elf(note_type))
    listed = subprocess.run(["readelf", "-n", str(f)], capture_output=True, text=True, check=True).stdout
    xen = [line for line in listed.splitlines() if line.strip().startswith("Xen")]
    assert len(xen) == 1 and ("0x00000012" in listed) == (note_type == pvh.PVH_NOTE_TYPE), listed
    assert pvh.has_entry(f.read_bytes()) == (note_type == pvh.PVH_NOTE_TYPE)


KERNELS = sorted(Path("/boot").glob("vmlinuz-*"))


@pytest.mark.skipif(not KERNELS or shutil.which("readelf") is None, reason="no kernel in /boot, or no readelf")
def test_this_machines_debian_kernel_has_a_pvh_entry_as_readelf_reads_it(tmp_path):
    """Debian's amd64 kernels are built with CONFIG_PVH (the guest image's kernel is one of them)."""
    elf = pvh.extract(KERNELS[-1].read_bytes())
    assert elf is not None
    f = tmp_path / "vmlinux"
    f.write_bytes(elf)
    listed = subprocess.run(["readelf", "-n", str(f)], capture_output=True, text=True, check=True).stdout
    assert pvh.has_entry(elf) == ("0x00000012" in listed) and pvh.has_entry(elf), listed[-500:]
