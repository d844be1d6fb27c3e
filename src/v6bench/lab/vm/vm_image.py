"""The VM router's guest image, built at set-up from this machine's Debian
packages (``make setup`` runs ``v6bench lab vm-image``).

- the kernel: Debian's ``linux-image-amd64`` (``/boot/vmlinuz-R`` with its
  modules in ``/lib/modules/R``; the newest release that has both), kept
  uncompressed as ``vmlinux`` where it has a PVH entry (:mod:`.pvh`), else
  as the bzImage ``vmlinuz``;
- an initramfs (gzip'd newc cpio): ``busybox-static`` as ``/bin/busybox``
  and init (:file:`guest/init`), the ``ip``, ``tc``, ``nft``, ``snmpd``,
  ``jool``, ``jool_siit``, ``bpftool`` (the XDP data plane's counters)
  and Open vSwitch's (the ``ovs-kernel`` data plane) binaries with every
  library ``ldd`` names,
  and the kernel modules in :data:`MODULES` with their dependencies
  (``modules.dep``), loaded at boot: Jool's (``jool-dkms``) are built by
  DKMS against the kernel's headers (``linux-headers-amd64``) when the
  image is built, if they are not there yet (:func:`ensure_jool`).

The image and ``manifest.json`` (kernel release, package versions, the
files' SHA-256) go to :func:`image_dir` (``/var/lib/v6bench/vm``, or
``V6BENCH_VM_DIR``); every VM router's result records the manifest.
Building again with the same inputs gives the same image (files sorted,
times zeroed).
"""

from __future__ import annotations

from typing import Any

import gzip
import hashlib
import io
import json
import os
import re
import shutil
import stat
import subprocess
from pathlib import Path

from ...core.errors import LabError
from ..dataplanes import registry as data_planes
from . import pvh

DEFAULT_DIR = "/var/lib/v6bench/vm"
#: The kernel's file in the image: the ELF booted at its PVH entry (:mod:`.pvh`), or the bzImage where the kernel
#: has no such entry (a guest then boots seconds slower under TCG, decompressing itself).
VMLINUX = "vmlinux"
VMLINUZ = "vmlinuz"
INIT = Path(__file__).with_name("guest") / "init"
BINARIES = ("/usr/bin/ip", "/usr/sbin/tc", "/usr/sbin/nft", "/usr/sbin/snmpd", "/usr/bin/jool", "/usr/bin/jool_siit",
            "/usr/sbin/bpftool", "/usr/bin/ovsdb-tool", "/usr/sbin/ovsdb-server", "/usr/sbin/ovs-vswitchd",
            "/usr/bin/ovs-vsctl", "/usr/bin/ovs-ofctl", "/usr/bin/ovs-appctl")
PACKAGES = ("linux-image-amd64", "busybox-static", "iproute2", "nftables", "snmpd", "qemu-system-x86",
            "linux-headers-amd64", "jool-dkms", "jool-tools", "bpftool", "openvswitch-switch")
#: Loaded at boot, in this order (dependencies first by modprobe): the
#: virtio NIC and disk, nftables with what the DUT configurations use
#: (libcrc32c's soft dependency crc32c first: busybox's modprobe skips softdeps),
#: the qdiscs of shaping and delay, the real tunnels, and Jool's translators (SIIT and NAT64). The data planes'
#: modules are in the image too, loaded only by the data plane that uses them (:func:`plane_modules`).
MODULES = (
    "virtio_pci", "virtio_net", "virtio_blk",
    "crc32c_generic", "nf_tables", "nft_limit", "nft_ct", "nft_nat", "nft_chain_nat", "nft_masq", "nft_reject_inet",
    "nf_conntrack", "nf_nat",
    "sch_tbf", "sch_netem", "sch_htb", "sch_fq_codel",
    "sit", "ip6_tunnel", "ip_gre", "ip6_gre", "gre",
    "jool_siit", "jool",
)
#: Jool's kernel modules, which DKMS builds for a kernel (:func:`ensure_jool`).
JOOL_MODULES = ("jool_common", "jool_siit", "jool")


def plane_modules() -> tuple[str, ...]:
    """The kernel modules every data plane loads in a guest when it is set up (lab/dataplanes/protocol.py)."""
    return tuple(m for plane in data_planes.REGISTRY.values() for m in plane.guest_modules)


def image_dir() -> Path:
    return Path(os.environ.get("V6BENCH_VM_DIR", DEFAULT_DIR))


def kernel_release() -> str:
    """The newest Debian kernel with its image and modules installed."""
    found = []
    for k in Path("/boot").glob("vmlinuz-*"):
        rel = k.name[len("vmlinuz-"):]
        if (Path("/lib/modules") / rel / "modules.dep").exists():
            found.append(rel)
    if not found:
        raise LabError("no Debian kernel with its modules in /boot and /lib/modules: apt-get install linux-image-amd64")

    def key(rel: str) -> list[Any]:
        return [int(x) if x.isdigit() else x for x in re.split(r"[.-]", rel)]

    return max(found, key=key)


def ensure_jool(release: str) -> None:
    """Jool's modules for kernel ``release``, built by DKMS (``dkms
    install``, which also runs depmod) unless they are there: Debian's
    ``jool-dkms`` builds them at its installation only for kernels whose
    headers were installed first. Raises :class:`LabError` naming the
    package that is missing."""
    dep = (Path("/lib/modules") / release / "modules.dep").read_text()
    if all(re.search(rf"/{m}\.ko(\.\w+)?:", dep) for m in JOOL_MODULES):
        return
    version = package_versions(("jool-dkms",))["jool-dkms"]
    if version is None:
        raise LabError("Jool's kernel modules are missing: apt-get install jool-dkms jool-tools")
    if not (Path("/lib/modules") / release / "build").exists():
        raise LabError(f"kernel {release} has no headers to build Jool against: apt-get install linux-headers-amd64")
    upstream = version.split("-")[0]
    r = subprocess.run(["dkms", "install", f"jool/{upstream}", "-k", release], capture_output=True, text=True)
    if r.returncode != 0:
        said = (r.stderr.strip() or r.stdout.strip() or "failed").splitlines()[-1]
        raise LabError(f"dkms install jool/{upstream} -k {release}: {said}")


def module_closure(release: str, names: tuple[str, ...]) -> list[str]:
    """The module files (relative to ``/lib/modules/R``) of ``names`` and of
    everything they depend on; a name built into the kernel needs none."""
    base = Path("/lib/modules") / release
    deps: dict[str, list[str]] = {}
    for line in (base / "modules.dep").read_text().splitlines():
        path, _, rest = line.partition(":")
        deps[path] = rest.split()
    by_name = {Path(p).name.split(".ko")[0].replace("-", "_"): p for p in deps}
    builtin = {Path(p).name.split(".ko")[0].replace("-", "_")
               for p in (base / "modules.builtin").read_text().split()}
    out: set[str] = set()
    for n in names:
        key = n.replace("-", "_")
        if key in builtin:
            continue
        if key not in by_name:
            raise LabError(f"kernel {release} has no module {n}")
        p = by_name[key]
        out.add(p)
        out.update(deps[p])
    return sorted(out)


def library_closure(binaries: tuple[str, ...]) -> list[str]:
    """Every shared library (and the loader) the ``binaries`` need, by ``ldd``."""
    libs: set[str] = set()
    for b in binaries:
        r = subprocess.run(["ldd", b], capture_output=True, text=True)
        if r.returncode != 0:
            raise LabError(f"ldd {b}: {r.stderr.strip() or r.stdout.strip()}")
        for line in r.stdout.splitlines():
            m = re.search(r"(/\S+)\s+\(0x", line)
            if m:
                libs.add(m.group(1))
    return sorted(libs)


def package_versions(names: tuple[str, ...] = PACKAGES) -> dict[str, str | None]:
    out = {}
    for n in names:
        r = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", n], capture_output=True, text=True)
        out[n] = r.stdout.strip() if r.returncode == 0 and r.stdout.strip() else None
    return out


class _Cpio:
    """A newc cpio archive written in memory (times zeroed, owner root)."""

    def __init__(self) -> None:
        self.buf = io.BytesIO()
        self.ino = 1
        self.names: set[str] = set()

    def _entry(self, name: str, mode: int, data: bytes = b"") -> None:
        name_b = name.encode() + b"\0"
        hdr = "070701" + "".join(f"{v:08x}" for v in (
            self.ino, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(name_b), 0))
        self.ino += 1
        self.buf.write(hdr.encode() + name_b)
        self.buf.write(b"\0" * (-(110 + len(name_b)) % 4))
        self.buf.write(data)
        self.buf.write(b"\0" * (-len(data) % 4))

    def dirs(self, path: str) -> None:
        parts = path.strip("/").split("/")[:-1]
        for k in range(1, len(parts) + 1):
            d = "/".join(parts[:k])
            if d not in self.names:
                self.names.add(d)
                self._entry(d, stat.S_IFDIR | 0o755)

    def file(self, path: str, data: bytes, mode: int = 0o644) -> None:
        path = path.strip("/")
        if path in self.names:
            return
        self.dirs(path)
        self.names.add(path)
        self._entry(path, stat.S_IFREG | mode, data)

    def symlink(self, path: str, target: str) -> None:
        path = path.strip("/")
        if path in self.names:
            return
        self.dirs(path)
        self.names.add(path)
        self._entry(path, stat.S_IFLNK | 0o777, target.encode())

    def finish(self) -> bytes:
        self._entry("TRAILER!!!", 0)
        return self.buf.getvalue()


def _copy_real(cpio: _Cpio, path: str) -> None:
    """``path`` into the archive under its real directory (``/lib`` is
    ``/usr/lib`` on Debian 12, and so in the archive); a symlink as a
    symlink, then its target."""
    p = Path(path)
    where = os.path.join(os.path.realpath(p.parent), p.name)
    if p.is_symlink():
        target = os.readlink(p)
        cpio.symlink(where, target)
        _copy_real(cpio, target if os.path.isabs(target) else os.path.join(os.path.realpath(p.parent), target))
        return
    cpio.file(where, p.read_bytes(), 0o755 if os.access(p, os.X_OK) else 0o644)


def initramfs(release: str) -> bytes:
    """The gzip'd initramfs for kernel ``release``."""
    busybox = Path("/bin/busybox")
    if not busybox.exists():
        raise LabError("/bin/busybox is missing: apt-get install busybox-static")
    if subprocess.run(["ldd", str(busybox)], capture_output=True).returncode == 0:  # dynamic: not busybox-static
        raise LabError("/bin/busybox is not the static one: apt-get install busybox-static")
    for b in BINARIES:
        if not Path(b).exists():
            raise LabError(f"{b} is missing: apt-get install iproute2 nftables snmpd jool-tools bpftool "
                           "openvswitch-switch")
    cpio = _Cpio()
    for merged in ("lib", "lib64"):  # Debian 12's merged /usr, which the binaries' loader paths assume
        if os.path.islink(f"/{merged}"):
            cpio.symlink(merged, os.readlink(f"/{merged}").lstrip("/"))
    cpio.file("bin/busybox", busybox.read_bytes(), 0o755)
    cpio.file("init", INIT.read_bytes(), 0o755)
    for b in BINARIES:
        _copy_real(cpio, b)
    for lib in library_closure(BINARIES):
        _copy_real(cpio, lib)
    ensure_jool(release)
    mods = module_closure(release, MODULES + plane_modules())
    base = Path("/lib/modules") / release
    mod_dir = os.path.realpath(base).lstrip("/")
    for m in mods:
        cpio.file(f"{mod_dir}/{m}", (base / m).read_bytes())
    dep_lines = [line for line in (base / "modules.dep").read_text().splitlines() if line.split(":")[0] in set(mods)]
    cpio.file(f"{mod_dir}/modules.dep", ("\n".join(dep_lines) + "\n").encode())
    for extra in ("modules.builtin", "modules.alias", "modules.order"):
        if (base / extra).exists():
            cpio.file(f"{mod_dir}/{extra}", (base / extra).read_bytes())
    cpio.file("etc/v6bench/modules", ("\n".join(MODULES) + "\n").encode())
    cpio.file("etc/passwd", b"root:x:0:0:root:/:/bin/sh\nsnmp:x:0:0:snmp:/:/bin/sh\n")
    cpio.file("etc/group", b"root:x:0:\n")
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode="wb", mtime=0, compresslevel=6) as gz:
        gz.write(cpio.finish())
    return out.getvalue()


def build(out_dir: Path | None = None) -> dict[str, Any]:
    """Builds the image into ``out_dir`` (default :func:`image_dir`) and
    returns its manifest; skips the work when the manifest says the same
    inputs built it."""
    out_dir = out_dir or image_dir()
    release = kernel_release()
    inputs = {"kernel_release": release, "packages": package_versions(),
              "init_sha256": hashlib.sha256(INIT.read_bytes()).hexdigest(),
              "builder_sha256": hashlib.sha256(Path(__file__).read_bytes()).hexdigest(), "modules": list(MODULES),
              "plane_modules": list(plane_modules())}
    manifest_path = out_dir / "manifest.json"
    if manifest_path.exists():
        old = json.loads(manifest_path.read_text())
        if all(old.get(k) == v for k, v in inputs.items()) and (out_dir / kernel_file(old)).exists() \
                and (out_dir / "initrd.gz").exists():
            return dict(old)
    out_dir.mkdir(parents=True, exist_ok=True)
    initrd = initramfs(release)
    bzimage = Path(f"/boot/vmlinuz-{release}").read_bytes()
    elf = pvh.extract(bzimage)
    entry = "pvh" if elf is not None and pvh.has_entry(elf) else "bzimage"
    kernel = elf if entry == "pvh" and elf is not None else bzimage
    name = kernel_file({"kernel_entry": entry})
    for stale in (VMLINUX, VMLINUZ):
        (out_dir / stale).unlink(missing_ok=True)
    (out_dir / "initrd.gz.tmp").write_bytes(initrd)
    (out_dir / f"{name}.tmp").write_bytes(kernel)
    os.replace(out_dir / "initrd.gz.tmp", out_dir / "initrd.gz")
    os.replace(out_dir / f"{name}.tmp", out_dir / name)
    manifest = {**inputs, "vmlinuz_sha256": hashlib.sha256(bzimage).hexdigest(), "kernel_entry": entry,
                "kernel_sha256": hashlib.sha256(kernel).hexdigest(),
                "initrd_sha256": hashlib.sha256(initrd).hexdigest(), "initrd_bytes": len(initrd)}
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


def kernel_path() -> Path:
    """The kernel QEMU boots (``-kernel``): the built image's ``vmlinux`` at
    its PVH entry where the kernel has one (:mod:`.pvh`), else its bzImage."""
    return image_dir() / kernel_file(load_manifest())


def kernel_file(manifest: dict[str, Any]) -> str:
    """The kernel's file named by a manifest's ``kernel_entry``."""
    return VMLINUX if manifest.get("kernel_entry") == "pvh" else VMLINUZ


def load_manifest() -> dict[str, Any]:
    """The manifest of the built image, or a :class:`LabError` saying how to build it."""
    p = image_dir() / "manifest.json"
    if not p.exists():
        raise LabError(f"no VM router image in {image_dir()}: run `make setup` (or `v6bench lab vm-image`)")
    manifest: dict[str, Any] = json.loads(p.read_text())
    return manifest


def remove(out_dir: Path | None = None) -> None:
    shutil.rmtree(out_dir or image_dir(), ignore_errors=True)
