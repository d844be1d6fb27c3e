"""A namespace router as a data plane acts on it (lab/dataplanes/protocol.RouterHost)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..dataplanes.protocol import DataPlane
from ..machine import nsctl
from ..model.topology import ROUTER

#: Where a router's data plane keeps what it is given and writes (under the lab's directory): ``KEY`` in the
#: router's node record holds what ``set_up`` returned.
KEY = "data_plane"


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

    def command(self, argv: list[str]) -> str:
        return nsctl.command(self.netns, argv)

    def place(self, name: str, source: Path) -> str:
        return str(source)


def host(node: dict[str, Any], work_dir: Path, cpu: int | None = None) -> NamespaceHost:
    """Router ``node`` (its record in a lab's node list) as a :class:`NamespaceHost` working in ``work_dir``."""
    return NamespaceHost(node["name"], node["netns"], tuple(i["name"] for i in node["interfaces"]), work_dir, cpu)


def set_up(plane: DataPlane, nodes: list[dict[str, Any]], lab_dir: Path,
           cpus: dict[str, int | None]) -> list[dict[str, Any]]:
    """``plane`` set up in every router of ``nodes`` (``cpus``: each one's DUT CPU), what it did kept in the
    router's record (:data:`KEY`); returns the threads whose CPU time is the routers' forwarding work, as the
    lab keeps its NAPI threads."""
    threads = []
    for n in nodes:
        if n["role"] == ROUTER:
            h = host(n, lab_dir / n["name"], cpus.get(n["name"]))
            record = {"work_dir": str(h.work_dir), **plane.set_up(h)}
            n[KEY] = record
            threads += [{"node": n["name"], "netns": n["netns"], "ifname": t["name"], "pid": t["pid"], "cpu": h.cpu,
                         "policy": "other", "priority": 0} for t in record.get("cpu_threads", [])]
    return threads


def counts(plane: DataPlane, nodes: tuple[dict[str, Any], ...]) -> dict[str, dict[str, int]]:
    """``plane``'s counts in every router of ``nodes`` now, by router (its work directory as set up)."""
    out = {}
    for n in nodes:
        if n["role"] == ROUTER:
            setup = n.get(KEY, {})
            out[n["name"]] = plane.counts(host(n, Path(setup.get("work_dir", "."))), setup)
    return out
