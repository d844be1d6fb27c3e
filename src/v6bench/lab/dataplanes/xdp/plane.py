"""An XDP forwarder built by v6bench (forward.bpf.c): on every router
interface, in the driver's receive path (native XDP: veth's on a namespace
router, virtio-net's in a VM router's guest, whose image holds bpftool), a frame the
kernel's FIB can route (``bpf_fib_lookup``) is rewritten and redirected to
its egress interface without the kernel's stack; every other frame goes on
to the kernel, which forwards it (the slow path) or takes it (ARP, ND,
frames for the router).

It forwards by the kernel's routes and neighbours, so a DUT configuration
the kernel's stack carries out (nftables rule sets, tunnels, translators,
shaping, steering) is refused: the fast path would pass by it. A table
(``[dut] table``) is the FIB it looks up, so it is carried.

Its counts: the program's per-CPU counters (``v6b_counts``, read with
bpftool from the program each interface holds) for the frames it
redirected, plus the kernel's forwarded datagrams (:mod:`..kernel.plane`)
for those it handed on: ``slow_path_frames``.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from ....core.errors import LabError
from ..kernel.plane import SNMP_FILES, forwarded
from ..protocol import RouterHost

SOURCE = Path(__file__).with_name("forward.bpf.c")
#: Where the compiled program is kept, by its source's SHA-256 (``V6BENCH_XDP_DIR`` to move it).
DEFAULT_DIR = "/var/lib/v6bench/xdp"
SECTION = "xdp"
#: v6b_counts' keys (forward.bpf.c's COUNT_*).
FAST_V4, FAST_V6, PASS_V4, PASS_V6, LOCAL = range(5)
#: The programs it needs, with their Debian packages.
TOOLS = {"clang": "clang", "bpftool": "bpftool"}


def _source_sha() -> str:
    return hashlib.sha256(SOURCE.read_bytes()).hexdigest()


@functools.cache
def compiled() -> Path:
    """The program's object file, compiled with clang once per source (kept in :data:`DEFAULT_DIR`)."""
    out_dir = Path(os.environ.get("V6BENCH_XDP_DIR", DEFAULT_DIR))
    out = out_dir / f"forward-{_source_sha()[:16]}.o"
    if out.exists():
        return out
    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(f".{os.getpid()}.tmp")
    arch_include = f"/usr/include/{os.uname().machine}-linux-gnu"
    r = subprocess.run(["clang", "-O2", "-g", "-target", "bpf", "-Wall", "-Werror", f"-I{arch_include}", "-c",
                        str(SOURCE), "-o", str(tmp)], capture_output=True, text=True)
    if r.returncode != 0:
        tmp.unlink(missing_ok=True)
        raise LabError(f"cannot compile the XDP forwarder ({SOURCE.name}): {r.stderr.strip()}")
    os.replace(tmp, out)
    return out


def _version(argv: list[str]) -> str:
    r = subprocess.run(argv, capture_output=True, text=True)
    return (r.stdout or r.stderr).splitlines()[0].strip() if r.returncode == 0 and (r.stdout or r.stderr) else "?"


def map_counts(dump: list[dict[str, Any]]) -> dict[int, int]:
    """``bpftool -j map dump``'s per-CPU array ``dump`` as key → the sum over CPUs."""
    out = {}
    for entry in dump:
        f = entry.get("formatted")
        if f is not None:
            out[int(f["key"])] = sum(int(v["value"]) for v in f["values"])
        else:  # without BTF: little-endian bytes as hex strings
            key = int.from_bytes(bytes(int(b, 16) for b in entry["key"]), "little")
            out[key] = sum(int.from_bytes(bytes(int(b, 16) for b in v["value"]), "little") for v in entry["values"])
    return out


class XdpPlane:
    """The XDP forwarder, on namespace routers (veth's native XDP) and in VM routers (virtio-net's)."""

    name = "xdp"
    summary = "an XDP forwarder (bpf_fib_lookup and redirect) beside the kernel"
    router_kinds: tuple[str, ...] = ("ns", "vm")
    carries = frozenset({"table", "table_seed", "destinations", "scope"})
    keeps_state = False
    guest_modules: tuple[str, ...] = ()

    def check_machine(self) -> None:
        """clang (and the kernel's BPF headers, libbpf-dev) to build it, bpftool to read its counters."""
        for tool, package in TOOLS.items():
            if shutil.which(tool) is None:
                raise LabError(f"the XDP data plane needs {tool} (Debian package {package}; `make setup` installs it)")
        if not Path("/usr/include/bpf/bpf_helpers.h").exists():
            raise LabError("the XDP data plane needs libbpf's headers (Debian package libbpf-dev; `make setup`)")

    def set_up(self, router: RouterHost) -> dict[str, Any]:
        """Attaches the program in native mode to each of the router's interfaces; records each one's
        program and counter map (read by :meth:`counts`, without looking them up again)."""
        path = router.place("forward.o", compiled())
        programs = {}
        for ifname in router.interfaces:
            router.command(["ip", "link", "set", "dev", ifname, "xdpdrv", "obj", path, "sec", SECTION])
            (link,) = json.loads(router.command(["ip", "-j", "link", "show", "dev", ifname]))
            prog = (link.get("xdp") or {}).get("prog") or {}
            if "id" not in prog:
                raise LabError(f"{router.name}/{ifname}: no XDP program attached")
            shown = json.loads(router.command(["bpftool", "-j", "prog", "show", "id", str(prog["id"])]))
            programs[ifname] = {"program_id": int(prog["id"]), "map_ids": [int(m) for m in shown.get("map_ids", [])]}
        return {"programs": programs}

    def counts(self, router: RouterHost, setup: dict[str, Any]) -> dict[str, int]:
        total = [0] * (LOCAL + 1)
        for attached in setup["programs"].values():
            for map_id in attached["map_ids"]:
                dump = json.loads(router.command(["bpftool", "-j", "map", "dump", "id", str(map_id)]))
                for k, n in map_counts(dump).items():
                    if 0 <= k < len(total):
                        total[k] += n
        v4, v6 = forwarded(router.command(["cat", *SNMP_FILES]))
        return {"forwarded_ipv4_frames": total[FAST_V4] + v4, "forwarded_ipv6_frames": total[FAST_V6] + v6,
                "slow_path_frames": v4 + v6, "passed_frames": total[PASS_V4] + total[PASS_V6],
                "local_frames": total[LOCAL]}

    def record(self) -> dict[str, Any]:
        return _record()


@functools.cache  # the source and the tools do not change under a running command; every trial's record asks
def _record() -> dict[str, Any]:
    return {"name": XdpPlane.name, "source_sha256": _source_sha(), "clang": _version(["clang", "--version"]),
            "bpftool": _version(["bpftool", "version"])}


PLANE = XdpPlane()
