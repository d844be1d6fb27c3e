"""A namespace router as a data plane acts on it (lab/dataplanes/protocol.RouterHost)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..dataplanes.protocol import DataPlane
from ..machine import nsctl
from ..model.topology import ROUTER


@dataclass(frozen=True)
class NamespaceHost:
    """Router ``name`` in namespace ``netns`` with its test ``interfaces``:
    commands run in the namespace, files are read where they are (the
    namespace shares this machine's file system)."""

    name: str
    netns: str
    interfaces: tuple[str, ...]

    def command(self, argv: list[str]) -> str:
        return nsctl.command(self.netns, argv)

    def place(self, name: str, source: Path) -> str:
        return str(source)


def hosts(nodes: list[dict[str, Any]] | tuple[dict[str, Any], ...]) -> list[NamespaceHost]:
    """Each router of a lab's recorded node list (``lab status --json``'s) as a :class:`NamespaceHost`."""
    return [NamespaceHost(n["name"], n["netns"], tuple(i["name"] for i in n["interfaces"]))
            for n in nodes if n["role"] == ROUTER]


def set_up(plane: DataPlane, nodes: list[dict[str, Any]]) -> dict[str, Any]:
    """``plane`` set up in every router of ``nodes``: what it did, by router."""
    return {h.name: plane.set_up(h) for h in hosts(nodes)}


def counts(plane: DataPlane, nodes: tuple[dict[str, Any], ...]) -> dict[str, dict[str, int]]:
    """``plane``'s counts in every router of ``nodes`` now, by router."""
    return {h.name: plane.counts(h) for h in hosts(nodes)}
