"""Commands run inside a VM router's guest, over its control serial port.

The guest's init (:file:`guest/init`) reads lines ``ID BASE64`` on its
second serial port (QEMU: a unix socket in the lab's run directory), runs
the decoded script with ``sh`` and answers ``ID RC BASE64(output)``; a line
``ID`` alone is a ping, answered ``ID 0``. :meth:`Guest.command` has the
contract of :func:`v6bench.lab.machine.nsctl.command` (argv, optional standard
input, the output; a failure is a :class:`LabError` naming the router and
the command), so the DUT's configuration code runs unchanged in a guest.
Every request is bounded by its timeout.
"""

from __future__ import annotations

import base64
import itertools
import shlex
import socket
import time
from pathlib import Path
from typing import Callable

from ...core.errors import LabError

_ids = itertools.count(1)


#: The guest's iproute2 and nftables binaries. Debian's static busybox runs
#: its own applets of the same names (ip, tc) before PATH is searched, so
#: every command names them by path (:func:`real_argv`).
BINARIES = {"ip": "/usr/bin/ip", "tc": "/usr/sbin/tc", "nft": "/usr/sbin/nft"}


def real_argv(argv: list[str]) -> list[str]:
    """``argv`` with its program by path where the guest has two of that name."""
    return [BINARIES.get(argv[0], argv[0]), *argv[1:]]


def shell_line(argv: list[str]) -> str:
    """``argv`` as one line of the guest's shell."""
    return " ".join(shlex.quote(a) for a in real_argv(argv))


def control_socket(run_dir: Path, node: str) -> Path:
    """Where QEMU serves router ``node``'s control port."""
    return Path(run_dir) / f"{node}-ctl.sock"


class Guest:
    """The control port of the guest named ``name`` at ``socket_path``."""

    def __init__(self, name: str, socket_path: Path) -> None:
        self.name = name
        self.socket_path = Path(socket_path)

    def _exchange(self, line: str, timeout_s: float) -> tuple[int, str]:
        rid = str(next(_ids)) + f"x{int(time.time() * 1000) % 1000000}"
        deadline = time.monotonic() + timeout_s
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.settimeout(max(0.05, deadline - time.monotonic()))
                s.connect(str(self.socket_path))
                s.sendall(f"{rid}{line}\n".encode())
                buf = b""
                while True:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise LabError(f"{self.name}: no answer from the guest within {timeout_s:g} s")
                    s.settimeout(left)
                    chunk = s.recv(65536)
                    if not chunk:
                        raise LabError(f"{self.name}: the guest's control port closed")
                    buf += chunk
                    while b"\n" in buf:
                        raw, buf = buf.split(b"\n", 1)
                        parts = raw.decode(errors="replace").strip().split(" ")
                        if parts and parts[0] == rid:  # answers to requests given up on are skipped
                            rc = int(parts[1]) if len(parts) > 1 and parts[1].lstrip("-").isdigit() else 255
                            out = base64.b64decode(parts[2]).decode(errors="replace") if len(parts) > 2 else ""
                            return rc, out
        except TimeoutError:  # socket.timeout
            raise LabError(f"{self.name}: no answer from the guest within {timeout_s:g} s") from None
        except OSError as e:
            raise LabError(f"{self.name}: guest control port {self.socket_path}: {e}") from None

    def ping(self, timeout_s: float = 1.0) -> bool:
        try:
            return self._exchange("", timeout_s)[0] == 0
        except LabError:
            return False

    def script(self, text: str, timeout_s: float = 30.0) -> tuple[int, str]:
        """Runs ``text`` with the guest's ``sh``; (exit status, output)."""
        return self._exchange(" " + base64.b64encode(text.encode()).decode(), timeout_s)

    def command(self, argv: list[str], input_data: str | bytes | None = None, timeout_s: float = 30.0) -> str:
        """Runs ``argv`` in the guest, ``input_data`` on its standard input
        (text as UTF-8, bytes as they are), and returns its standard output;
        a non-zero exit is a :class:`LabError` with what it printed on stderr."""
        cmd = shell_line(argv)
        if input_data is not None:
            raw = input_data.encode() if isinstance(input_data, str) else input_data
            cmd = f"echo {base64.b64encode(raw).decode()} | base64 -d | {cmd}"
        rc, out = self.script(f"{cmd} 2>/run/cmd.err; rc=$?; [ $rc = 0 ] || cat /run/cmd.err; exit $rc\n",
                              timeout_s)
        if rc != 0:
            raise LabError(f"{self.name}: {' '.join(argv)}: {out.strip()}")
        return out

    def wait_ready(self, timeout_s: float, alive: Callable[[], bool] = lambda: True) -> float:
        """Waits until the guest answers a ping; returns the seconds waited.
        ``alive()`` False (QEMU exited) ends the wait with an error."""
        start = time.monotonic()
        while time.monotonic() - start < timeout_s:
            if not alive():
                raise LabError(f"{self.name}: QEMU exited while the guest booted")
            if self.socket_path.exists() and self.ping(0.5):
                return time.monotonic() - start
            time.sleep(0.1)
        raise LabError(f"{self.name}: the guest did not answer within {timeout_s:g} s of its start")
