"""Settings that only exist inside a network namespace: sysctls under
``/proc/sys/net``, ``/sys/class/net`` attributes and ethtool features; and
tools run inside one (:func:`command`: nft, tc, ip).

Each call forks a child that enters the namespace (setns), gets a private
mount namespace with a sysfs of that network namespace (as ``ip netns exec``
does), does its writes and exits; the caller's namespaces never change.
"""

from __future__ import annotations

import ctypes
import fcntl
import json
import os
import socket
import struct
import signal
import subprocess
import time
import traceback
from typing import Any, Callable, TypeVar

from pyroute2 import config as pr_config
from pyroute2 import netns as pr_netns

from ...core.errors import LabError

#: How long pyroute2 waits for the helper process that creates, removes or opens a namespace [s]. Its default,
#: 2 s, is too short after a namespace holding a table of millions of routes went: the kernel frees them under
#: the lock a new namespace needs, and fib-scale's full run (2026-11-29) failed there after 23 builds.
#: Each wait stays bounded; a helper that is really stuck is still killed.
pr_config.default_communicate_timeout = 120

#: What a function run in a namespace returns (JSON-able: it crosses from the child as JSON).
T = TypeVar("T")

_libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNS = 0x00020000
CLONE_NEWNET = 0x40000000
MS_REC = 0x4000
MS_PRIVATE = 1 << 18

SIOCETHTOOL = 0x8946
#: Legacy ethtool commands (include/uapi/linux/ethtool.h).
ETHTOOL_GTSO = 0x1E
ETHTOOL_STSO = 0x1F
ETHTOOL_SGRO = 0x2C

NETNS_DIR = "/run/netns"


def _check(rc: int, what: str) -> None:
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _enter(netns: str) -> None:
    fd = os.open(os.path.join(NETNS_DIR, netns), os.O_RDONLY)
    _check(_libc.setns(fd, CLONE_NEWNET), f"setns {netns}")
    os.close(fd)
    _check(_libc.unshare(CLONE_NEWNS), "unshare mount namespace")
    _check(_libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None), "make / private")
    _check(_libc.mount(b"sysfs", b"/sys", b"sysfs", 0, None), "mount sysfs")


def run_in(netns: str, fn: Callable[[], T]) -> T:
    """Runs ``fn`` in a child inside ``netns``; returns its JSON-able result.

    Raises :class:`LabError` with the child's error if it failed.
    """
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: never returns
        os.close(r)
        code = 0
        try:
            _enter(netns)
            payload: dict[str, Any] = {"ok": fn()}
        except BaseException as e:  # noqa: BLE001 - reported to the parent
            payload = {"error": f"{e}", "trace": traceback.format_exc(limit=3)}
            code = 1
        try:
            os.write(w, json.dumps(payload).encode())
        finally:
            os._exit(code)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        data = f.read()
    os.waitpid(pid, 0)
    try:
        payload = json.loads(data or b"{}")
    except ValueError:
        payload = {}
    if "ok" not in payload:
        raise LabError(f"in namespace {netns}: {payload.get('error', 'the helper process died')}")
    result: T = payload["ok"]  # JSON-able: a tuple comes back as a list
    return result


def write_file(path: str, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


def sysctl(key: str, value: str | int) -> None:
    """Sets a sysctl (``net.ipv4.ip_forward``) of the current namespace."""
    write_file("/proc/sys/" + key.replace(".", "/"), str(value))


def read_file(path: str) -> str:
    with open(path) as f:
        return f.read().strip()


def ethtool_set(ifname: str, command: int, on: bool) -> None:
    """A legacy ethtool set (``ETHTOOL_SGRO``, ``ETHTOOL_STSO``) on ``ifname``."""
    _ethtool(ifname, command, 1 if on else 0)


def ethtool_get(ifname: str, command: int) -> bool:
    """A legacy ethtool get (``ETHTOOL_GTSO``, …) on ``ifname``: whether it is on."""
    return _ethtool(ifname, command, 0) != 0


def _ethtool(ifname: str, command: int, data: int) -> int:
    value = ctypes.create_string_buffer(struct.pack("II", command, data))
    ifreq = struct.pack("16sP", ifname.encode(), ctypes.addressof(value))
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        fcntl.ioctl(s.fileno(), SIOCETHTOOL, ifreq)
    data_out: int = struct.unpack("II", value.raw[:8])[1]
    return data_out


def command(netns: str, argv: list[str], input_text: str | None = None, timeout_s: float = 30) -> str:
    """Runs ``argv`` inside ``netns`` (``ip netns exec``) and returns its
    output; a failure raises :class:`LabError` naming the namespace, the
    command and what it printed on stderr."""
    r = subprocess.run(["ip", "netns", "exec", netns, *argv], input=input_text, capture_output=True, text=True,
                       timeout=timeout_s)
    if r.returncode != 0:
        raise LabError(f"{netns}: {' '.join(argv)}: {r.stderr.strip()}")
    return r.stdout


def processes_in(ns: str) -> set[int]:
    """PIDs with any thread in namespace ``ns`` (matched by namespace inode)."""
    try:
        target = os.stat(os.path.join(NETNS_DIR, ns)).st_ino
    except OSError:
        return set()
    pids = set()
    me = os.getpid()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            for tid in os.listdir(f"/proc/{entry}/task"):
                if os.stat(f"/proc/{entry}/task/{tid}/ns/net").st_ino == target:
                    pids.add(int(entry))
                    break
        except OSError:
            continue
    return pids


def remove(ns: str, grace_s: float = 0.0) -> None:
    """Removes namespace ``ns`` and what runs in it: its processes get
    SIGTERM and ``grace_s`` seconds to end (a BGP speaker withdraws its
    routes), then SIGKILL (at once with no grace); then the namespace
    goes, its interfaces and nftables with it. Raises OSError if the
    namespace cannot be removed."""
    pids = processes_in(ns)
    if grace_s > 0:
        for pid in pids:
            _signal(pid, signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        while pids and time.monotonic() < deadline:
            pids = {p for p in pids if _signal(p, 0)}
            time.sleep(0.05)
    for pid in pids:
        _signal(pid, signal.SIGKILL)
    pr_netns.remove(ns)


def _signal(pid: int, sig: int) -> bool:
    """Sends ``sig`` to ``pid``; False if it is gone."""
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        return False
    return True
