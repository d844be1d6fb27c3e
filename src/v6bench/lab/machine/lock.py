"""The machine's lab lock: one command at a time builds, uses or removes
a lab on this machine (any kind: the emulated lab's namespaces, an
external lab's tester ports and BGP speaker), held as an exclusive
``flock`` on the run directory's lock file for as long as it works; the
kernel releases it when the holder dies, however it dies. Also whether a
process runs, and a warning on standard error."""

from __future__ import annotations

import errno
import fcntl
import os
import sys
import time
from contextlib import contextmanager
from typing import Iterator

from ...core.errors import LabError
from ..model.site import Site


#: The lock files this process holds, and how deep.
_held: dict[str, int] = {}


@contextmanager
def locked(site: Site, what: str, wait_s: float = 0.0) -> Iterator[None]:
    """Holds the machine's lab lock while the block runs.

    Raises :class:`LabError` naming the holder if another v6bench command has
    it for longer than ``wait_s``. The kernel releases the lock when the
    holder dies, however it dies. Nested in a block of this process that
    holds it already (a campaign run holds it from start to end, and its
    labs and self-tests take it again), the block just runs.
    """
    key = str(site.lock_file)
    if _held.get(key):
        _held[key] += 1
        try:
            yield
        finally:
            _held[key] -= 1
        return
    try:
        site.run_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(site.lock_file, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as e:
        raise LabError(f"cannot take the lab lock {site.lock_file}: {e.strerror} (labs are built as root)") from None
    deadline = time.monotonic() + wait_s
    held = False
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as e:
                if e.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                    raise
                if time.monotonic() >= deadline:
                    holder = os.pread(fd, 200, 0).decode(errors="replace").strip() or "another process"
                    raise LabError(f"the lab is busy: {holder} holds {site.lock_file}") from None
                time.sleep(0.1)
        held = True
        _held[key] = 1
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()} ({what})\n".encode(), 0)
        yield
    finally:
        if held:  # only the holder may clear the holder's name
            _held.pop(key, None)
            os.ftruncate(fd, 0)
        os.close(fd)  # releases the flock


def is_locked(site: Site) -> bool:
    """True if some command holds the lab lock right now."""
    try:
        fd = os.open(site.lock_file, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return False
    except OSError:
        return True
    finally:
        os.close(fd)


def running(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, which an init that does not reap
    leaves behind, does not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def warn(message: str) -> None:
    print(f"v6bench: {message}", file=sys.stderr)
