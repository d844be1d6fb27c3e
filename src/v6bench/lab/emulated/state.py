"""The lab's recorded state, its lock, and recovery from a crashed run.

The state file (``lab.json`` in the run directory) is written when a build
starts (``status: building``) and again when it is done (``up``). Every
command that builds, uses or removes the lab holds an exclusive ``flock`` on
the run directory's lock for as long as it works, so whoever takes the lock
and finds

- a state that is not ``up`` (a build that died),
- a ``temporary`` lab (its owner, a ``v6bench trial``, would still hold the lock),
- an ``up`` lab whose namespaces are gone, or
- namespaces with the lab's prefix but no state,

has found a stale lab, and removes it before going on.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

from pyroute2 import netns as pr_netns

from ...core.errors import LabError
from ..model.cpus import CpuPlan
from ..model import translation
from ..model.dut import DutConfig
from ..model.mtu import Mtus
from ..model.site import Site

STATE_VERSION = 1


@dataclass(frozen=True)
class LabState:
    """What was built: enough to use it (trial) and to remove it (down).

    ``nodes`` is the ``lab status --json`` node list; ``napi`` lists the
    pinned NAPI kernel threads ({node, netns, ifname, pid, cpu}).
    """

    topology: str
    link_speed_bps: float
    mtu: Mtus
    status: str
    temporary: bool
    owner_pid: int
    created_at_unix_s: float
    cpu_plan: CpuPlan
    nodes: tuple[dict, ...]
    napi: tuple[dict, ...]
    sysctls: dict
    kernel: str
    #: The DUT configuration its routers were given (stored as ``dut``).
    dut_config: DutConfig = DutConfig()
    #: How its routers are made, lab/model/spec.ROUTERS: namespaces, or VMs (each router node's "vm" record,
    #: lab/vm/vm.py); stored as ``router``, the ``[lab]`` key that chooses it.
    router_kind: str = "ns"
    #: The forwarding table its routers hold (lab/fib_load.load's record), None without one.
    fib: dict | None = None

    #: Its ports live in its own namespaces and its routers share this machine with the tester (lab/interface.py).
    allow_root_netns = False
    shared_machine = True

    @property
    def kind(self) -> str:
        """The kind of lab (lab/backends.REGISTRY): how its routers are made."""
        return self.router_kind

    @property
    def table_new(self) -> bool:
        """Its routers were given their table for this use (a lab built
        for one command): learned and crossed once before its trials
        (trial/warmup.py). ``lab up`` did that for the lab it built."""
        return self.temporary and self.fib is not None

    @property
    def translator_addresses(self) -> translation.Addresses:
        """Where R1's NAT64 (``dut_config.nat64``) puts the other family: the addresses every router v6bench
        builds uses (lab/model/translation.py)."""
        return translation.BUILT

    @property
    def allow_other_addresses(self) -> bool:
        """Frames to addresses outside the benchmarking blocks: only to a
        table's destinations, inside the lab's closed namespaces."""
        return self.fib is not None

    @property
    def netns_prefix(self) -> str:
        """The start of the lab's namespace names (node N lives in
        ``PREFIX + N``, :meth:`Site.netns`): the engine opens ports only
        in namespaces named so."""
        n = self.nodes[0]
        return n["netns"].removesuffix(n["name"])

    def to_json(self) -> dict:
        return {
            "state_version": STATE_VERSION,
            "topology": self.topology,
            "link_speed_bps": self.link_speed_bps,
            "mtu": self.mtu.to_json(),
            "status": self.status,
            "temporary": self.temporary,
            "owner_pid": self.owner_pid,
            "created_at_unix_s": self.created_at_unix_s,
            "cpu_plan": self.cpu_plan.to_json(),
            "nodes": list(self.nodes),
            "napi": list(self.napi),
            "sysctls": self.sysctls,
            "kernel": self.kernel,
            "dut": self.dut_config.to_json(),
            "router": self.router_kind,
            "fib": self.fib,
        }

    @classmethod
    def from_json(cls, d: dict) -> "LabState":
        if d.get("state_version") != STATE_VERSION:
            raise ValueError("state version")
        return cls(
            d["topology"], float(d["link_speed_bps"]), Mtus.from_json(d["mtu"]), d["status"], bool(d["temporary"]),
            int(d["owner_pid"]), float(d["created_at_unix_s"]), CpuPlan.from_json(d["cpu_plan"]),
            tuple(d["nodes"]), tuple(d["napi"]), dict(d["sysctls"]), d["kernel"], DutConfig.from_json(d.get("dut")),
            d.get("router", "ns"), d.get("fib"),
        )

    def node(self, name: str) -> dict:
        for n in self.nodes:
            if n["name"] == name:
                return n
        raise KeyError(name)

    @property
    def netns_names(self) -> list[str]:
        return [n["netns"] for n in self.nodes]


def save(site: Site, state: LabState) -> None:
    """Writes the state atomically (a reader sees the old or the new file)."""
    site.run_dir.mkdir(parents=True, exist_ok=True)
    tmp = site.state_file.with_suffix(".tmp")
    tmp.write_text(json.dumps(state.to_json(), indent=1))
    os.replace(tmp, site.state_file)


def load(site: Site) -> LabState | None:
    """The recorded state, or None if there is none or it cannot be read."""
    try:
        return LabState.from_json(json.loads(site.state_file.read_text()))
    except FileNotFoundError:
        return None
    except (ValueError, KeyError, TypeError):
        return None


def forget(site: Site) -> None:
    try:
        site.state_file.unlink()
    except FileNotFoundError:
        pass


def our_namespaces(site: Site) -> list[str]:
    return sorted(n for n in pr_netns.listnetns() if n.startswith(site.netns_prefix))


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


def stale_reason(site: Site, state: LabState | None) -> str | None:
    """Why the recorded lab (or what is left of one) is stale; None if it is
    usable or there is nothing. Call with the lock held."""
    existing = set(our_namespaces(site))
    if state is None:
        return f"namespaces {', '.join(sorted(existing))} without a lab state" if existing else None
    if state.status != "up":
        return f"a build by pid {state.owner_pid} that did not finish"
    if state.temporary:
        return f"a temporary lab of pid {state.owner_pid}, which is gone"
    missing = [ns for ns in state.netns_names if ns not in existing]
    if missing:
        return f"lab {state.topology} lost its namespaces {', '.join(missing)}"
    for n in state.nodes:
        if n.get("vm") and not running(n["vm"]["pid"]):
            return f"VM router {n['name']} of lab {state.topology} is gone (QEMU pid {n['vm']['pid']})"
    return None


def warn(message: str) -> None:
    print(f"v6bench: {message}", file=sys.stderr)
