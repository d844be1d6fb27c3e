"""A VM router's link written to a pcap file by QEMU while a block runs
(QEMU's ``filter-dump`` on the NIC's netdev, added and removed over QMP,
lab/vm/vm.py). A link between two VM routers has no host interface to
capture on (QEMU datagram sockets, guest to guest): this is where its
frames, DS-Lite's encapsulated ones say, can be read by an independent
decoder. Every frame the NIC sends or receives is written, up to
``maxlen_bytes`` of it, at QEMU's cost: for checks at low rates, not
during a measurement.
"""

from __future__ import annotations

import json
import socket
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from ...core.errors import LabError
from .vm import Vm

QMP_TIMEOUT_S = 5.0


@contextmanager
def dump(vm: Vm, ifname: str, path: Path, maxlen_bytes: int = 2048) -> Iterator[Path]:
    """Frames of ``vm``'s NIC ``ifname`` (its guest's name, ``r1-r2``) into
    the pcap file ``path`` while the block runs, both ways; the file is
    complete when it ends. One at a time a NIC, several NICs at once."""
    if ifname not in vm.netdevs:
        raise LabError(f"{vm.node} has no NIC {ifname} (it has {', '.join(vm.netdevs) or 'none recorded'})")
    _add(vm, ifname, path, maxlen_bytes)
    try:
        yield path
    finally:
        _delete(vm, ifname)


def restart(vm: Vm, ifname: str, path: Path, maxlen_bytes: int = 2048) -> None:
    """Inside :func:`dump`'s block for the same NIC: the file starts afresh
    (QEMU truncates it), holding what the NIC carries from now on."""
    _delete(vm, ifname)
    _add(vm, ifname, path, maxlen_bytes)


def _add(vm: Vm, ifname: str, path: Path, maxlen_bytes: int) -> None:
    qmp(vm, {"execute": "object-add", "arguments": {"qom-type": "filter-dump", "id": _dump_id(ifname),
                                                     "netdev": vm.netdevs[ifname], "file": str(path),
                                                     "maxlen": maxlen_bytes}})


def _delete(vm: Vm, ifname: str) -> None:
    qmp(vm, {"execute": "object-del", "arguments": {"id": _dump_id(ifname)}})


def _dump_id(ifname: str) -> str:
    return f"v6bench-dump-{ifname}"


def qmp(vm: Vm, command: dict[str, Any]) -> Any:
    """``command``'s return from ``vm``'s QEMU (QMP: the greeting, capabilities, then the command)."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(QMP_TIMEOUT_S)
            s.connect(str(vm.qmp_path))
            f = s.makefile("rwb")
            json.loads(f.readline())
            out = None
            for c in ({"execute": "qmp_capabilities"}, command):
                f.write(json.dumps(c).encode() + b"\n")
                f.flush()
                while True:
                    line = f.readline()
                    if not line:
                        raise LabError(f"{vm.node}: QEMU closed its QMP socket")
                    reply = json.loads(line)
                    if "event" not in reply:
                        break
                if "error" in reply:
                    raise LabError(f"{vm.node}: QMP {c['execute']}: {reply['error'].get('desc', reply['error'])}")
                out = reply.get("return")
            return out
    except OSError as e:
        raise LabError(f"{vm.node}: QMP on {vm.qmp_path}: {e}") from None
