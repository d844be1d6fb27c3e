"""A router on its own machine: QEMU with Debian's kernel (lab/vm/vm_image.py).

One VM per router node. QEMU runs inside the node's namespace (so removing
the lab's namespaces kills it, lab/emulated/build.py) on the router's CPU, with

- one virtio NIC per link of the router, whose host end is a tap device
  created in the peer's namespace under the link's interface name
  (``t1-r1`` in t1): the tester's port is the tap, so frames go from the
  engine into the guest with no bridge between; the guest's NIC is named
  like the namespace router's (``r1-t1``) by MAC at boot;
- a management NIC (tap ``mgmt`` in the router's namespace, host
  :data:`MGMT_HOST`, guest :data:`MGMT_GUEST`), where the guest's snmpd
  answers (CPU and counters, lab/external/snmp.py, as for a physical router);
- its console on the first serial port (``NODE-console.log`` in the run
  directory) and its control channel on the second (lab/vm/guest.py);
- QEMU's machine protocol (QMP) on ``NODE-qmp.sock`` in the run directory,
  through which a link's frames can be written to a file (lab/vm/capture.py);
- a 1-MiB virtio disk holding the startup configuration the guest runs at
  every boot (the host writes it: the router's addresses, routes and
  rules), so a hard reset (guest reboot) comes back configured by itself.

Accelerator: KVM when ``/dev/kvm`` opens and a KVM guest boots (probed
once per boot of this machine, remembered in :data:`ACCEL_CACHE`), else
TCG; recorded with every result. The taps exist only while QEMU holds
them: a crashed or killed QEMU leaves none.
"""

from __future__ import annotations

from typing import Any

import fcntl
import json
import os
import struct
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path

from ...core.errors import LabError
from ..machine import nsctl
from . import vm_image
from .guest import Guest, control_socket

MGMT_HOST = "198.19.255.253"
MGMT_GUEST = "198.19.255.254"
MGMT_PREFIX = 30
SNMP_COMMUNITY = "v6bench"
SNMP_WRITE_COMMUNITY = "v6bench-rw"  # only the host's end of the management link; used once, lab/vm/vm_lab.py
MEMORY_MB = 256
BOOT_TIMEOUT_S = {"kvm": 30.0, "tcg": 90.0}
ACCEL_CACHE = Path("/run/v6bench-accel.json")
STARTUP_DISK_BYTES = 1 << 20

TUNSETIFF = 0x400454CA
IFF_TAP = 0x0002
IFF_NO_PI = 0x1000


@dataclass(frozen=True)
class VmPort:
    """One NIC: the guest's interface ``guest_ifname`` with MAC ``mac``;
    its host end the tap ``tap`` in namespace ``tap_netns``, or, with
    ``dgram`` (local path, remote path), a QEMU datagram socket toward
    another VM's NIC."""

    tap: str
    tap_netns: str
    guest_ifname: str
    mac: str
    dgram: tuple[str, str] | None = None


def guest_mac(router_index: int, port_index: int) -> str:
    """A locally administered MAC for the guest NIC (02:76:36:RR:PP:01)."""
    return f"02:76:36:{router_index:02x}:{port_index:02x}:01"


def open_tap(netns: str, name: str) -> int:
    """Creates tap ``name`` in namespace ``netns`` and returns its file
    descriptor (the tap lives as long as a holder of the descriptor)."""
    out: dict[str, Any] = {}

    def work() -> None:  # setns changes only this thread's namespace
        try:
            fd = os.open(os.path.join(nsctl.NETNS_DIR, netns), os.O_RDONLY)
            try:
                nsctl._check(nsctl._libc.setns(fd, nsctl.CLONE_NEWNET), f"setns {netns}")
            finally:
                os.close(fd)
            tun = os.open("/dev/net/tun", os.O_RDWR)
            fcntl.ioctl(tun, TUNSETIFF, struct.pack("16sH", name.encode(), IFF_TAP | IFF_NO_PI))
            out["fd"] = tun
        except OSError as e:
            out["error"] = f"tap {name} in {netns}: {e}"

    t = threading.Thread(target=work)
    t.start()
    t.join()
    if "error" in out:
        raise LabError(out["error"])
    fd: int = out["fd"]
    return fd


def kvm_usable() -> bool:
    try:
        fd = os.open("/dev/kvm", os.O_RDWR)
    except OSError:
        return False
    os.close(fd)
    return True


def remembered_accel() -> str | None:
    try:
        d = json.loads(ACCEL_CACHE.read_text())
    except (OSError, ValueError):
        return None
    return d.get("accel") if d.get("boot_id") == _boot_id() else None


def remember_accel(accel: str, why: str) -> None:
    ACCEL_CACHE.write_text(json.dumps({"boot_id": _boot_id(), "accel": accel, "why": why}) + "\n")


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


def write_startup(path: Path, script: str) -> None:
    """The startup configuration onto the VM's disk image (NUL-padded)."""
    data = script.encode()
    if len(data) >= STARTUP_DISK_BYTES:
        raise LabError(f"the startup configuration is {len(data)} bytes; the disk holds {STARTUP_DISK_BYTES}")
    path.write_bytes(data + b"\0" * (STARTUP_DISK_BYTES - len(data)))


@dataclass
class Vm:
    """A running VM router (what :func:`start` made)."""

    node: str
    netns: str
    pid: int
    accel: str
    boot_s: float
    run_dir: Path
    qemu_version: str
    cpu: int | None = None
    memory_mb: int = MEMORY_MB
    #: QEMU's netdev id of each guest NIC, by the guest's interface name (``{"r1-r2": "n1"}``).
    netdevs: dict[str, str] = field(default_factory=dict)

    @property
    def guest(self) -> Guest:
        return Guest(self.node, self.socket_path)

    @property
    def socket_path(self) -> Path:
        return control_socket(self.run_dir, self.node)

    @property
    def qmp_path(self) -> Path:
        return qmp_socket(self.run_dir, self.node)

    @property
    def console_log(self) -> Path:
        return self.run_dir / f"{self.node}-console.log"

    @property
    def disk(self) -> Path:
        return self.run_dir / f"{self.node}-startup.img"

    def to_json(self) -> dict[str, Any]:
        return {"node": self.node, "netns": self.netns, "pid": self.pid, "accel": self.accel,
                "boot_s": round(self.boot_s, 2), "run_dir": str(self.run_dir), "qemu_version": self.qemu_version,
                "cpu": self.cpu, "memory_mb": self.memory_mb, "netdevs": self.netdevs}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "Vm":
        return cls(d["node"], d["netns"], d["pid"], d["accel"], d["boot_s"], Path(d["run_dir"]), d["qemu_version"],
                   d.get("cpu"), d.get("memory_mb", MEMORY_MB), d.get("netdevs", {}))


def qmp_socket(run_dir: Path, node: str) -> Path:
    return run_dir / f"{node}-qmp.sock"


def qemu_version() -> str:
    r = subprocess.run(["qemu-system-x86_64", "--version"], capture_output=True, text=True)
    if r.returncode != 0:
        raise LabError("qemu-system-x86_64 is missing: apt-get install qemu-system-x86 (make setup)")
    return r.stdout.splitlines()[0].strip()


def start(node: str, netns: str, run_dir: Path, ports: list[VmPort], cpu: int | None, startup: str,
          accel: str | None = None, table_disk: Path | None = None, memory_mb: int = MEMORY_MB) -> Vm:
    """Boots the VM router ``node`` in namespace ``netns`` with ``ports``
    (taps made in their namespaces) and the management tap, its startup
    configuration ``startup`` on its disk, pinned to ``cpu``, with
    ``memory_mb`` of memory; waits until its guest answers. ``accel`` None:
    KVM if it works here, else TCG. ``table_disk``: a file the guest reads
    as its second disk, ``/dev/vdb``, read-only (a forwarding table's
    routes, lab/emulated/fib_load.py)."""
    vm_image.load_manifest()
    version = qemu_version()
    write_startup(run_dir / f"{node}-startup.img", startup)
    if accel is None:
        accel = remembered_accel()
    if accel is None:
        if kvm_usable():
            try:
                vm = _boot(node, netns, run_dir, ports, cpu, "kvm", version, table_disk, memory_mb)
                remember_accel("kvm", "a KVM guest booted")
                return vm
            except LabError as e:
                remember_accel("tcg", f"KVM failed: {e}")
        else:
            remember_accel("tcg", "/dev/kvm cannot be opened")
        accel = "tcg"
    return _boot(node, netns, run_dir, ports, cpu, accel, version, table_disk, memory_mb)


def _boot(node: str, netns: str, run_dir: Path, ports: list[VmPort], cpu: int | None, accel: str,
          version: str, table_disk: Path | None, memory_mb: int) -> Vm:
    img = vm_image.image_dir()
    sock = control_socket(run_dir, node)
    sock.unlink(missing_ok=True)
    qmp_socket(run_dir, node).unlink(missing_ok=True)
    console = run_dir / f"{node}-console.log"
    fds = []
    netdevs = []
    try:
        for k, p in enumerate(ports):
            if p.dgram:
                local, remote = p.dgram
                Path(local).unlink(missing_ok=True)
                netdevs.append(f"dgram,id=n{k},local.type=unix,local.path={local},remote.type=unix,remote.path={remote}")
            else:
                fds.append(open_tap(p.tap_netns, p.tap))
                netdevs.append(f"tap,id=n{k},fd={fds[-1]}")
        fds.append(open_tap(netns, "mgmt"))
        netdevs.append(f"tap,id=n{len(ports)},fd={fds[-1]}")
        names = ",".join(f"{p.mac}={p.guest_ifname}" for p in ports)
        mgmt_mac = guest_mac(0xFE, 0)
        argv = ["qemu-system-x86_64", "-name", f"v6bench-{node}", "-nodefaults", "-no-user-config", "-nographic",
                "-machine", f"pc,accel={accel}", "-cpu", "host" if accel == "kvm" else "max",
                "-smp", "1", "-m", str(memory_mb),
                "-kernel", str(vm_image.kernel_path()), "-initrd", str(img / "initrd.gz"),
                "-append", f"console=ttyS0 panic=-1 quiet tsc=reliable no_timer_check v6bench.if={names},{mgmt_mac}=mgmt",
                "-serial", f"file:{console}", "-serial", f"unix:{sock},server=on,wait=off",
                "-drive", f"file={run_dir / f'{node}-startup.img'},format=raw,if=virtio",
                "-monitor", "none", "-qmp", f"unix:{qmp_socket(run_dir, node)},server=on,wait=off"]
        if table_disk is not None:
            argv += ["-drive", f"file={table_disk},format=raw,if=virtio,readonly=on"]
        for k, (port, netdev) in enumerate(zip([*ports, None], netdevs)):
            mac = port.mac if port else mgmt_mac
            argv += ["-netdev", netdev, "-device", f"virtio-net-pci,netdev=n{k},mac={mac},romfile="]
        prefix = ["ip", "netns", "exec", netns]
        if cpu is not None:
            prefix += ["taskset", "-c", str(cpu)]
        with open(run_dir / f"{node}-qemu.err", "wb") as err_file:
            proc = subprocess.Popen(prefix + argv, pass_fds=fds, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=err_file, start_new_session=True)
    finally:
        for fd in fds:
            os.close(fd)
    guest = Guest(node, sock)
    try:
        boot_s = guest.wait_ready(BOOT_TIMEOUT_S[accel], alive=lambda: proc.poll() is None)
    except BaseException as e:  # a guest that did not come up (or Ctrl-C): its QEMU and taps go now
        proc.kill()
        proc.wait(timeout=30)
        if not isinstance(e, LabError):
            raise
        err = (run_dir / f"{node}-qemu.err").read_text(errors="replace").strip()[-300:]
        tail = console.read_text(errors="replace").strip()[-300:] if console.exists() else ""
        raise LabError(f"{e} ({accel}); qemu: {err or '-'}; console: …{tail}") from None
    return Vm(node, netns, proc.pid, accel, boot_s, run_dir, version, cpu, memory_mb,
              {p.guest_ifname: f"n{k}" for k, p in enumerate(ports)})
