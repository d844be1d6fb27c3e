"""A router as a data plane acts on it (lab/dataplanes/protocol.RouterHost):
set up in every router of a lab, counted around a trial, its counts set
beside the engine's. A namespace router is a :class:`NamespaceHost`; a VM
router's host is lab/vm/router_host.py's, handed in as ``host_of``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ..dataplanes.protocol import DataPlane, RouterHost
from ..machine import napi, nsctl
from ..model.topology import ROUTER

#: Where a router's data plane keeps what it is given and writes (under the lab's directory): ``KEY`` in the
#: router's node record holds what ``set_up`` returned.
KEY = "data_plane"
#: A router's node record, its work directory and DUT CPU as the host a data plane acts on.
HostOf = Callable[[dict[str, Any], Path, "int | None"], RouterHost]


@dataclass(frozen=True)
class NamespaceHost:
    """Router ``name`` in namespace ``netns`` with its test ``interfaces``:
    commands run in the namespace, files are read where they are (the
    namespace shares this machine's file system)."""

    name: str
    netns: str
    interfaces: tuple[str, ...]
    work_dir: Path
    cpu: int | None = None

    @property
    def run_dir(self) -> str:
        """Its work directory: the namespace shares this machine's file system."""
        return str(self.work_dir)

    def command(self, argv: list[str]) -> str:
        return nsctl.command(self.netns, argv)

    def place(self, name: str, source: Path) -> str:
        return str(source)


def host(node: dict[str, Any], work_dir: Path, cpu: int | None = None) -> NamespaceHost:
    """Router ``node`` (its record in a lab's node list) as a :class:`NamespaceHost` working in ``work_dir``."""
    return NamespaceHost(node["name"], node["netns"], tuple(i["name"] for i in node["interfaces"]), work_dir, cpu)


def set_up(plane: DataPlane, nodes: list[dict[str, Any]], lab_dir: Path,
           cpus: dict[str, int | None], host_of: HostOf = host) -> list[dict[str, Any]]:
    """``plane`` set up in every router of ``nodes`` (``cpus``: each one's DUT CPU), what it did kept in the
    router's record (:data:`KEY`); returns the threads whose CPU time is the routers' forwarding work, as the
    lab keeps its NAPI threads."""
    threads = []
    for n in nodes:
        if n["role"] == ROUTER:
            h = host_of(n, lab_dir / n["name"], cpus.get(n["name"]))
            record = {"work_dir": str(h.work_dir), **plane.set_up(h)}
            n[KEY] = record
            threads += [napi.thread_record(n["name"], n["netns"], t["name"], t["pid"], h.cpu)
                        for t in record.get("cpu_threads", [])]
    return threads


def counts(plane: DataPlane, nodes: tuple[dict[str, Any], ...], host_of: HostOf = host) -> dict[str, dict[str, int]]:
    """``plane``'s counts in every router of ``nodes`` now, by router (its work directory as set up)."""
    out = {}
    for n in nodes:
        if n["role"] == ROUTER:
            setup = n.get(KEY, {})
            out[n["name"]] = plane.counts(host_of(n, Path(setup.get("work_dir", ".")), None), setup)
    return out


def over_trial(name: str, before: dict[str, dict[str, int]], after: dict[str, dict[str, int]],
               eng: dict[str, Any]) -> dict[str, Any]:
    """Data plane ``name``'s counts over a trial (``dut.data_plane``: :func:`counts` ``after`` less
    ``before``, by router) with the engine's: ``engine_rx_ipv4_frames``/``…ipv6…`` (test frames the tester
    received, by the family they arrived in) and, per router, ``beyond_engine_ipv4_frames``/``…ipv6…``: what
    the router counted forwarded less what the tester received. 0 for a router whose frames all reach a
    tester port (topology a's R1, one way or both); frames lost beyond it otherwise (a later router's loss).
    A router whose counts went back (it was reset during the trial, its counts started again) has only
    ``restarted``: True."""
    rx = {4: 0, 6: 0}
    for s in eng.get("streams", []):
        fam = s.get("rx_ip_version") or s.get("ip_version")
        if fam in rx:
            rx[fam] += int(s.get("rx_frames") or 0)
    routers: dict[str, dict[str, Any]] = {}
    for r, c in after.items():
        d = {k: n - before.get(r, {}).get(k, 0) for k, n in c.items()}
        if any(n < 0 for n in d.values()):
            routers[r] = {"restarted": True}
            continue
        routers[r] = {**d, **{f"beyond_engine_ipv{f}_frames": d[f"forwarded_ipv{f}_frames"] - rx[f] for f in (4, 6)}}
    return {"name": name, "routers": routers, "engine_rx_ipv4_frames": rx[4], "engine_rx_ipv6_frames": rx[6]}
