"""The emulated lab's recorded state, and recovery from a crashed run.

The state file (``lab.json`` in the run directory) is written when a build
starts (``status: building``) and again when it is done (``up``). Every
command that builds, uses or removes the lab holds an exclusive ``flock`` on
the run directory's lock (:mod:`..machine.lock`) for as long as it works, so whoever takes the lock
and finds

- a state that is not ``up`` (a build that died),
- a ``temporary`` lab (its owner, a ``v6bench trial``, would still hold the lock),
- an ``up`` lab whose namespaces are gone, or
- namespaces with the lab's prefix but no state,

has found a stale lab, and removes it before going on.
"""

from __future__ import annotations

from typing import Any

import dataclasses
import json
import os
from dataclasses import dataclass

from pyroute2 import netns as pr_netns

from ..dataplanes import registry as data_planes
from ..model.cpus import CpuPlan
from ..model import translation
from ..model.dut import DutConfig
from ..model.mtu import Mtus
from ..model.site import Site
from ..machine.lock import running

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
    nodes: tuple[dict[str, Any], ...]
    napi: tuple[dict[str, Any], ...]
    sysctls: dict[str, Any]
    kernel: str
    #: The DUT configuration its routers were given (stored as ``dut``).
    dut_config: DutConfig = DutConfig()
    #: How its routers are made, lab/model/spec.ROUTERS: namespaces, or VMs (each router node's "vm" record,
    #: lab/vm/vm.py); stored as ``router``, the ``[lab]`` key that chooses it.
    router_kind: str = "ns"
    #: The forwarding table its routers hold (lab/emulated/fib_load.load's record), None without one.
    fib: dict[str, Any] | None = None
    #: What forwards in its routers (lab/dataplanes/registry.REGISTRY); stored as ``data_plane``.
    data_plane: str = "kernel"

    #: Its ports live in its own namespaces and its routers share this machine with the tester (lab/protocol.Lab).
    allow_root_netns = False
    shared_machine = True

    @property
    def lab_kind(self) -> str:
        """The kind of lab (lab/backends.REGISTRY): how its routers are made."""
        return self.router_kind

    @property
    def keeps_state(self) -> bool:
        """Its routers track connections of test frames (lab/dataplanes/registry.keeps_state)."""
        return data_planes.keeps_state(self.dut_config, self.data_plane)

    @property
    def table_new(self) -> bool:
        """Its routers were given their table for this use (a lab built
        for one command): learned and crossed once before its trials
        (trial/warmup.py). ``lab up`` did that for the lab it built."""
        return self.temporary and self.fib is not None

    #: Its routers' learning is checked by their own route lookups when they are built (lab/emulated/fib_load.py).
    fib_learning_timeout_s = None

    def with_fib(self, fib: dict[str, Any] | None) -> "LabState":
        return dataclasses.replace(self, fib=fib)

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
        netns: str = n["netns"]
        return netns.removesuffix(n["name"])

    def to_json(self) -> dict[str, Any]:
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
            "data_plane": self.data_plane,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "LabState":
        if d.get("state_version") != STATE_VERSION:
            raise ValueError("state version")
        return cls(
            d["topology"], float(d["link_speed_bps"]), Mtus.from_json(d["mtu"]), d["status"], bool(d["temporary"]),
            int(d["owner_pid"]), float(d["created_at_unix_s"]), CpuPlan.from_json(d["cpu_plan"]),
            tuple(d["nodes"]), tuple(d["napi"]), dict(d["sysctls"]), d["kernel"], DutConfig.from_json(d.get("dut")),
            d.get("router", "ns"), d.get("fib"), d.get("data_plane", "kernel"),
        )

    def node(self, name: str) -> dict[str, Any]:
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
