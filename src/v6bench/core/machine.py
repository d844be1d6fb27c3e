"""The machine a run was made on, and how runs name and tell machines apart.

A delay or a cost per frame holds for the CPU that measured it (a lookup's
cost depends on its caches), so every run records the machine
(:func:`read`, stored as the environment's ``host``), and a comparison
across runs labels each run with it (:func:`label`) and groups runs by it
(:func:`key`).

Machines are told apart by what they are, not by their name: the CPU
(vendor, model name, family, model, stepping), the number of CPUs and the
hypervisor. Two virtual machines of one kind are one machine here; the
microcode, the caches, the memory and the kernel are recorded beside it
and are run attributes a comparison can ask about (``docs/compare.md``).
Runs stored before the record existed carry only the CPU's model name and
count (``cpu_model``, ``cpus``): for them the key holds what they have,
and :func:`label` marks the rest as not recorded.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
from pathlib import Path

#: The fields of the record that make a machine's identity (:func:`key`).
IDENTITY = ("vendor", "model_name", "family", "model", "stepping", "cpus", "hypervisor")


def _lscpu() -> dict[str, str]:
    """lscpu's fields (util-linux, on every Debian), without the colons."""
    try:
        out = subprocess.run(["lscpu", "-J"], capture_output=True, text=True, timeout=10, check=True).stdout
        return {f["field"].rstrip(":"): f.get("data") for f in json.loads(out)["lscpu"]}
    except (OSError, subprocess.SubprocessError, ValueError, KeyError, TypeError):
        return {}


def _cpuinfo_field(name: str) -> str | None:
    try:
        with open("/proc/cpuinfo") as f:
            return next((line.split(":", 1)[1].strip() for line in f if line.split(":", 1)[0].strip() == name), None)
    except OSError:
        return None


def _caches(cpu_dir: Path = Path("/sys/devices/system/cpu/cpu0/cache")) -> list[dict]:
    """CPU 0's caches: level, type, size [bytes], and how many CPUs share each."""
    out = []
    for d in sorted(cpu_dir.glob("index*")):
        try:
            size = (d / "size").read_text().strip()
            shared = (d / "shared_cpu_list").read_text().strip()
            n_shared = sum(int(b) - int(a) + 1 if "-" in part else 1
                           for part in shared.split(",") for a, _, b in [part.partition("-")])
            unit = {"K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}.get(size[-1:], 1)
            out.append({"level": int((d / "level").read_text()), "type": (d / "type").read_text().strip(),
                        "size_bytes": int(size.rstrip("KMG")) * unit, "shared_by_cpus": n_shared})
        except (OSError, ValueError):
            continue
    return out


def _memory_bytes() -> int | None:
    try:
        with open("/proc/meminfo") as f:
            kb = next(int(line.split()[1]) for line in f if line.startswith("MemTotal:"))
        return kb * 1024
    except (OSError, StopIteration, ValueError):
        return None


def _virtualization() -> str | None:
    """systemd-detect-virt's answer (a container or a VM kind, "none"), if it is installed."""
    try:
        r = subprocess.run(["systemd-detect-virt"], capture_output=True, text=True, timeout=10)
        return r.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def _int(v: str | None) -> int | None:
    try:
        return int(v) if v is not None else None
    except ValueError:
        return None


def read() -> dict:
    """This machine: its CPU (vendor, model name, family, model, stepping,
    microcode, caches, CPUs, cores, threads a core, sockets), hypervisor,
    virtualization, memory [bytes], kernel and architecture."""
    ls = _lscpu()
    sockets, cores = _int(ls.get("Socket(s)")), _int(ls.get("Core(s) per socket"))
    return {
        "vendor": ls.get("Vendor ID") or _cpuinfo_field("vendor_id"),
        "model_name": ls.get("Model name") or _cpuinfo_field("model name"),
        "family": _int(ls.get("CPU family") or _cpuinfo_field("cpu family")),
        "model": _int(ls.get("Model") or _cpuinfo_field("model")),
        "stepping": _int(ls.get("Stepping") or _cpuinfo_field("stepping")),
        "microcode": _cpuinfo_field("microcode"),
        "caches": _caches(),
        "cpus": os.cpu_count(),
        "cores": sockets * cores if sockets and cores else None,
        "threads_per_core": _int(ls.get("Thread(s) per core")),
        "sockets": sockets,
        "hypervisor": ls.get("Hypervisor vendor"),
        "virtualization": _virtualization(),
        "memory_bytes": _memory_bytes(),
        "kernel": os.uname().release,
        "architecture": platform.machine(),
    }


def record(env: dict) -> dict:
    """A run environment's machine record; for a run stored before it was
    recorded, what the environment has (``cpu_model``, ``cpus``, ``kernel``)."""
    host = env.get("host")
    if isinstance(host, dict):
        return host
    return {"model_name": env.get("cpu_model"), "cpus": env.get("cpus"), "kernel": env.get("kernel"),
            "architecture": env.get("machine")}


def key(env: dict) -> tuple:
    """The machine's identity fields (:data:`IDENTITY`, None where not recorded)."""
    r = record(env)
    return tuple(r.get(k) for k in IDENTITY)


def identity(env: dict) -> tuple | None:
    """The machine's identity when its run recorded it in full (a ``host``
    record with every :data:`IDENTITY` field; the hypervisor is None on bare
    metal); None when it did not: a run stored before the record holds only
    the model name and the CPU count, and its machine is unknown."""
    if not isinstance(env.get("host"), dict):
        return None
    k = key(env)
    if any(v is None for f, v in zip(IDENTITY, k) if f != "hypervisor"):
        return None
    return k


def same(a: dict, b: dict) -> bool:
    """Whether two runs' environments name one machine, the one rule every
    view uses (before/after's repeats, a trend's marks, the plan's history,
    and :func:`group`): both identities known and equal. A field a run did
    not record is unknown, never a wildcard: a run without the record is the
    same machine as none."""
    i = identity(a)
    return i is not None and i == identity(b)


def label(env: dict) -> str:
    """The machine in a few words: "AMD EPYC (family 26 model 2 stepping 1), 2 CPUs, KVM"."""
    r = record(env)
    cpu = r.get("model_name") or "CPU not recorded"
    if r.get("family") is not None:
        cpu += f" (family {r['family']} model {r.get('model')} stepping {r.get('stepping')})"
    parts = [cpu, f"{r.get('cpus') or '?'} CPUs"]
    if r.get("hypervisor"):
        parts.append(r["hypervisor"])
    return ", ".join(parts)


def group(env: dict) -> str:
    """The machine as a level of ``compare --by machine`` and as the cluster
    runs are nested in (report/across.py): its :func:`label` when its
    identity is known, so two runs share a level exactly when :func:`same`
    says so; runs that did not record it share one level per CPU model and
    count, marked unknown, apart from every known machine."""
    if identity(env) is not None:
        return label(env)
    return f"{label(env)} (machine not recorded in full)"
