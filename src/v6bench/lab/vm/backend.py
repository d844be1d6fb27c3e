"""The backend of the emulated lab with VM routers (``vm``,
lab/backends.py): the emulated lab's backend (lab/emulated/backend.py,
beside the namespace routers') with the VMs' routers, tunnels, commands,
observer, reset and record."""

from __future__ import annotations

from typing import Any

from ...core.errors import LabError
from ..emulated.backend import EmulatedBackend
from ..emulated.state import LabState
from ..model import tunnel
from ..model.dut import DutConfig
from ..model.spec import LabSpec
from ..model.site import Site
from . import vm, vm_image, vm_lab
from ..protocol import Backend


class VmBackend(EmulatedBackend):
    """The emulated lab with VM routers (:mod:`.vm_lab`): observed from
    QEMU's threads and the guests' agents, reset inside the guest; its
    tunnels are the real devices of Debian's kernel."""

    routers = vm_lab.VM_ROUTERS
    tunnels = tunnel.VM_TUNNELS
    tunnels_where = "on VM routers"
    tunnel_stand_in = False
    no_dslite = None  # the guest's kernel has ip6tnl and NAT after it (lab/model/dslite.py)
    no_rps = "receive packet steering runs on namespace routers: a VM router's guest has one vCPU"
    empties_connections = False

    def clear_connections(self, lab: LabState) -> float:
        raise LabError("RFC 9693's connection measurements run on namespace routers for now (the VM router's "
                       "guest has no conntrack tool)")

    def hold_connections(self, lab: LabState, timeout_s: float) -> float | None:
        """Not set here, nor known: None (the connections test is refused with clear_connections)."""
        return None

    def check_machine(self, spec: LabSpec, dut: DutConfig) -> None:
        """QEMU and the guest image (``make setup``); the image holds the
        guests' translators (Jool) and tunnels."""
        vm.qemu_version()
        vm_image.load_manifest()

    def router_command(self, node: dict[str, Any], argv: list[str]) -> str:
        """``argv``'s output on router ``node``: in its guest, over the control port."""
        return vm_lab.guest_of(node).command(argv)

    def observer(self, lab: LabState) -> vm_lab.VmObserver:
        return vm_lab.VmObserver(lab)

    def reset(self, site: Site, lab: LabState, kind: str) -> tuple[LabState, dict[str, Any]]:
        return vm_lab.reset(site, lab, kind)

    def prepare(self) -> str:
        """Builds the guest image from this machine's Debian packages if it is missing or stale (:mod:`.vm_image`)."""
        m = vm_image.build()
        entry = "booted at its PVH entry" if m.get("kernel_entry") == "pvh" else "a bzImage: no PVH entry"
        return (f"VM router image in {vm_image.image_dir()}: kernel {m['kernel_release']} ({entry}), initramfs "
                f"{m['initrd_bytes'] / 1e6:.1f} MB")

    def record(self, lab: LabState) -> dict[str, Any]:
        return {**super().record(lab), **vm_lab.record(lab)}


#: This kind's backend, held by the type checker to the lab it makes and takes (lab/protocol.Backend).
BACKEND: Backend[LabState] = VmBackend()
