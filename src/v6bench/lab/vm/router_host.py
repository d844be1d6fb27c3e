"""A VM router as a data plane acts on it (lab/dataplanes/protocol.RouterHost):
commands in its guest (lab/vm/guest.py), files copied into the guest's
``/run/v6bench`` (its memory; gone with the VM)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .guest import Guest
from .vm import Vm

#: Where a data plane's files lie in the guest.
GUEST_DIR = "/run/v6bench"


@dataclass(frozen=True)
class VmHost:
    """Router ``name`` in VM guest ``guest`` with its test ``interfaces`` (the guest's NICs)."""

    name: str
    guest: Guest
    interfaces: tuple[str, ...]
    work_dir: Path
    cpu: int | None = None
    #: Its directory in the guest: :data:`GUEST_DIR`.
    run_dir: str = GUEST_DIR

    def command(self, argv: list[str]) -> str:
        return self.guest.command(argv)

    def place(self, name: str, source: Path) -> str:
        """``source`` copied into the guest as ``GUEST_DIR/name`` (bytes as they are)."""
        path = f"{GUEST_DIR}/{name}"
        self.guest.command(["sh", "-c", f"mkdir -p {GUEST_DIR} && cat > {path}"], input_data=source.read_bytes())
        return path


def host(node: dict[str, Any], work_dir: Path, cpu: int | None = None) -> VmHost:
    """VM router ``node`` (its record in a lab's node list, with its ``vm``) as a :class:`VmHost`."""
    return VmHost(node["name"], Vm.from_json(node["vm"]).guest, tuple(i["name"] for i in node["interfaces"]),
                  work_dir, cpu)
