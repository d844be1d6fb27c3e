"""The backends of the emulated lab (lab/backends.py): what both of its
kinds share (:class:`EmulatedBackend`: v6bench builds the lab on this
machine), and the kind with namespace routers (``ns``,
:class:`NamespaceBackend`). The kind with VM routers (``vm``,
lab/vm/backend.py) stands beside it on the same base."""

from __future__ import annotations

from abc import ABC, abstractmethod
from contextlib import contextmanager
from functools import partial
from typing import Any, Iterator

from ...core.errors import UsageError
from ...core.rates import format_link_speed
from ..dataplanes import registry as data_planes
from ..model import spec as lab_spec
from ..model import dslite, tunnel
from ..model.cpus import plan as cpu_plan
from ..model.dut import DutConfig
from ..model.site import Site
from ..model.spec import LabSpec
from ..model.topology import ROUTER
from ..model.tunnel import Tunnel
from . import build, configured, connections, control, leftovers, observe, rps, translator
from ..machine import nsctl
from . import reset as lab_reset
from .state import LabState
from ..protocol import Backend, Observer


class EmulatedBackend(ABC):
    """The emulated lab, whatever its routers (:mod:`.build`): built by
    v6bench on this machine, or the one ``lab up`` built. A kind of it
    gives its routers, their tunnels and what they cannot carry, and the
    abstract methods: a command in a router, the observations around a
    trial, the reset, the connection table, what the machine needs and
    what to prepare."""

    #: How its routers are made (lab/emulated/build.Routers).
    routers: build.Routers
    #: The tunnels its routers have (lab/model/tunnel.py), where, and whether they are stand-ins.
    tunnels: dict[str, Tunnel]
    tunnels_where: str
    tunnel_stand_in: bool
    #: Why these routers cannot be DS-Lite's B4 and AFTR (lab/model/dslite.py), or None where they can.
    no_dslite: str | None
    #: Why these routers cannot steer received frames over CPUs (lab/emulated/rps.py), or None where they can.
    no_rps: str | None
    #: Whether R1's connection table can be emptied and counted (``clear_connections``): RFC 9693's
    #: ``connections`` test needs it (campaign/spec.py checks it before any lab is used).
    empties_connections: bool
    routes_address_ranges = True  # the topology's static routes hold them (lab/model/topology.py)

    @abstractmethod
    def router_command(self, node: dict[str, Any], argv: list[str]) -> str:
        """``argv``'s output on router ``node`` (its record in the lab's node list)."""

    @abstractmethod
    def observer(self, lab: LabState) -> Observer: ...

    @abstractmethod
    def reset(self, site: Site, lab: LabState, kind: str) -> tuple[LabState, dict[str, Any]]: ...

    @abstractmethod
    def clear_connections(self, lab: LabState) -> float: ...

    @abstractmethod
    def hold_connections(self, lab: LabState, timeout_s: float) -> float | None: ...

    @abstractmethod
    def check_machine(self, spec: LabSpec, dut: DutConfig) -> None: ...

    @abstractmethod
    def prepare(self) -> str | None: ...

    def dut_config(self, d: dict[str, Any], spec: LabSpec) -> DutConfig:
        """The ``[dut]`` table (lab/model/spec.dut_config), its tunnel one these routers have, DS-Lite and RPS
        where they can."""
        dut = lab_spec.dut_config(d, spec)
        data_planes.check(spec.data_plane, self.routers.router_kind, dut)
        self.tunnel(dut.tunnel)
        if dut.dslite and self.no_dslite:
            raise UsageError(self.no_dslite, "dslite")
        if dut.rps and self.no_rps:
            raise UsageError(self.no_rps, "rps")
        rps.check(dut, cpu_plan(spec.cpu_arrangement))
        return dut

    def tunnel(self, name: str) -> Tunnel | None:
        """The tunnel ``name`` (``[dut] tunnel``) on these routers; None for none."""
        return tunnel.find(name, self.tunnels, self.tunnels_where) if name else None

    def tunnel_record(self, lab: LabState) -> dict[str, Any] | None:
        """The ``tunnel``'s record, or DS-Lite's softwire's (a real device: only routers that can make it)."""
        if lab.dut_config.dslite:
            return tunnel.record(dslite.LINK, False)
        return tunnel.record(self.tunnel(lab.dut_config.tunnel), self.tunnel_stand_in)

    def up(self, site: Site, spec: LabSpec, dut: DutConfig | None) -> LabState:
        """Builds the lab ``lab up`` keeps (:func:`control.up`)."""
        return control.up(site, spec.topology, spec.link_speed_bps, spec.mtu, spec.cpu_arrangement,
                          dut or DutConfig(), self.routers, spec.data_plane)

    @contextmanager
    def take(self, site: Site, spec: LabSpec, dut: DutConfig | None, apply: bool = True) -> Iterator[LabState]:
        """The lab that is up (the options given must match it), or a
        temporary one built now and removed afterwards
        (:func:`control.for_trial`); ``apply`` is for external labs."""
        with control.for_trial(site, spec.topology, spec.link_speed_bps, spec.mtu, spec.cpu_arrangement, dut,
                               self.routers, spec.data_plane) as lab:
            yield lab

    def check_test(self, spec: LabSpec, test_kind: str, runs_host_stacks: bool, reset_kinds: tuple[str, ...]) -> None:
        """What a test of ``test_kind`` needs of this kind of lab, checked
        before any lab is used; errors name the test's fields. The
        emulated lab has all (its path's rules are trial/fit.py's), but a
        hard reset rebuilds R1 with the kernel's forwarding alone: not with
        another data plane."""
        if "hard" in reset_kinds and spec.data_plane != data_planes.DEFAULT:
            raise UsageError(f"a hard reset rebuilds R1 without its {spec.data_plane} data plane: use reset kind "
                             f"soft, or data_plane = \"{data_planes.DEFAULT}\"", "kinds")

    def restabilize(self, lab: LabState) -> dict[str, Any] | None:
        """Waits out the incomplete datagrams the routers hold from a trial before (:mod:`.leftovers`), read
        with :meth:`router_command` (a namespace's or a guest's ``/proc``)."""
        return leftovers.wait_out({n["name"]: partial(self.router_command, n, ["cat", *leftovers.FILES])
                                   for n in lab.nodes if n["role"] == ROUTER})

    def describe(self, lab: LabState) -> str:
        return control.describe(lab)

    def dut_record(self, lab: LabState) -> dict[str, Any]:
        """Its rule sets, qdiscs, routes and links (:func:`configured.datapaths`)."""
        nodes = list(lab.nodes)
        return {"config": lab.dut_config.to_json(), "rulesets": configured.rulesets(nodes, self.router_command),
                "datapaths": configured.datapaths(nodes, self.router_command, table=lab.fib is not None),
                "description": control.describe(lab)}

    def status(self, site: Site) -> tuple[LabState | None, bool]:
        """The lab that is up and whether a command uses it now (:func:`control.status`)."""
        return control.status(site)

    def down(self, site: Site) -> list[str]:
        """Removes the lab and anything stale (:func:`control.down`); the namespaces removed."""
        return control.down(site)

    def status_record(self, lab: LabState) -> dict[str, Any]:
        """``lab status --json`` of the lab that is up (docs/trial-result.md)."""
        return {"up": True, "topology": lab.topology, "link_speed_bps": lab.link_speed_bps, "mtu": lab.mtu.to_json(),
                "temporary": lab.temporary, "created_at_unix_s": lab.created_at_unix_s,
                "cpu_plan": lab.cpu_plan.to_json(), "nodes": list(lab.nodes), "napi_threads": list(lab.napi),
                "router": lab.router_kind, "data_plane": lab.data_plane, "tunnel": self.tunnel_record(lab),
                "fib": lab.fib, "description": self.describe(lab)}

    def lab_table(self, lab: LabState) -> dict[str, Any]:
        """Its topology, link speed, MTUs and routers (the CPU arrangement is a trial's to give)."""
        return {"topology": lab.topology, "link_speed": format_link_speed(lab.link_speed_bps),
                "mtu": lab.mtu.to_json(), "router": lab.router_kind,
                **({"data_plane": lab.data_plane} if lab.data_plane != data_planes.DEFAULT else {})}

    def table_offer(self, spec: LabSpec) -> None:
        """None: its routers are given the table when they are built (lab/emulated/fib_load.py)."""
        return None

    def record(self, lab: LabState) -> dict[str, Any]:
        return {"kind": "emulated", "topology": lab.topology, "link_speed_bps": lab.link_speed_bps,
                "mtu": lab.mtu.to_json(), "temporary": lab.temporary, "shared_machine": lab.shared_machine,
                "cpu_plan": lab.cpu_plan.to_json(),
                "napi_threads": [{k: t.get(k) for k in ("node", "ifname", "cpu", "policy", "priority")} for t in lab.napi],
                "sysctls": lab.sysctls, "router": lab.router_kind, "tunnel": self.tunnel_record(lab),
                "fib": lab.fib, "data_plane": data_planes.find(lab.data_plane).record()}


class NamespaceBackend(EmulatedBackend):
    """The emulated lab with namespace routers: each a network namespace of this machine's kernel."""

    routers: build.Routers = build.NAMESPACE_ROUTERS
    #: Stand-ins of the kernel's own datapaths (lab/model/tunnel.py).
    tunnels = tunnel.TUNNELS
    tunnels_where = 'on namespace routers (gre: use router = "vm")'
    tunnel_stand_in = True
    no_dslite: str | None = ("DS-Lite needs VM routers (--router vm): this kernel has no ip6tnl in namespaces, and "
                             "its SRv6 stand-in decapsulates past the hooks where the AFTR's NAT44 runs")
    no_rps: str | None = None
    empties_connections = True

    def check_machine(self, spec: LabSpec, dut: DutConfig) -> None:
        """NAT64 on namespace routers needs TAYGA (:func:`.translator.binary`),
        a data plane its tools (lab/dataplanes/); the rest is the namespace
        lab's set-up (``make demo`` installs it)."""
        data_planes.find(spec.data_plane).check_machine()
        if dut.nat64:
            translator.binary()

    def observer(self, lab: LabState) -> Observer:
        return observe.LabObserver(lab)

    def reset(self, site: Site, lab: LabState, kind: str) -> tuple[LabState, dict[str, Any]]:
        return lab_reset.reset(site, lab, kind)

    def clear_connections(self, lab: LabState) -> float:
        """Empties the stateful router's connection table (:mod:`.connections`); the time it took [s]."""
        return connections.clear(lab.node(lab.dut_config.stateful_router)["netns"], bool(lab.dut_config.max_connections))

    def hold_connections(self, lab: LabState, timeout_s: float) -> float | None:
        """The stateful router's connection-tracking UDP timeouts (:mod:`.connections`)."""
        return connections.hold(lab.node(lab.dut_config.stateful_router)["netns"], timeout_s)

    def router_command(self, node: dict[str, Any], argv: list[str]) -> str:
        """``argv``'s output on router ``node`` (its record in the lab's node list): in its namespace."""
        return nsctl.command(node["netns"], argv)

    def prepare(self) -> str | None:
        """None: namespace routers need nothing made beforehand."""
        return None


#: This kind's backend, held by the type checker to the lab it makes and takes (lab/protocol.Backend).
BACKEND: Backend[LabState] = NamespaceBackend()
