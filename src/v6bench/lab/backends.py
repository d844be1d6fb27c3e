"""The kinds of lab, one backend each, chosen once from :data:`REGISTRY`.

A lab in use (:class:`~.state.LabState` of the emulated lab, or
:class:`~.external.ExternalLab`) and the spec it is made from
(:class:`~.spec.LabSpec`) each say their ``kind``; :func:`of` and
:func:`for_spec` look the backend up, and every action that depends on
the kind is a method of it:

- ``dut_config``: the ``[dut]`` table as this kind of lab takes it, and
  ``tunnel``: the tunnel mechanism its routers give a ``[dut] tunnel``;
- ``check_test``: what a test needs of the kind of lab, before any lab;
- ``up``: the lab ``lab up`` builds and keeps;
- ``take``: the lab a trial or a scenario runs on, locked throughout
  (built or taken into use, configured, and undone when the use ends);
- ``observer``: the observations around one trial (the DUT's CPU and
  counters; :class:`~.interface.Observer`);
- ``reset``: the DUT reset during a trial (RFC 2544 §26.6), and the lab
  after it;
- ``describe``, ``dut_record``, ``record``: the lab in words, the DUT
  as configured for a run's environment, and the lab part of every trial
  result (``docs/trial-result.md``).

Three kinds: ``ns`` (the emulated lab with namespace routers), ``vm``
(the emulated lab with VM routers, :mod:`.vm_lab`) and ``external`` (a
router v6bench did not build, :mod:`.external`). A fourth kind is one
more class with these methods and one more line in :data:`REGISTRY`.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import replace
from typing import ContextManager, Iterator, Protocol, Union

from . import bgp_speaker, build, configured, control, external, observe, snmp_observe, state, tunnel, vm_lab
from . import spec as lab_spec
from . import reset as lab_reset
from ..core.errors import UsageError
from .dut import DutConfig
from .external import ExternalLab
from .site import Site
from .spec import LabSpec
from .state import LabState
from .tunnel import Tunnel

#: A lab in use, of any kind (lab/interface.py says what a trial reads of it).
Lab = Union[LabState, ExternalLab]


class Observer(Protocol):
    """Observations around one trial: ``before`` the engine starts,
    ``during`` it (a context manager around the engine, at most
    ``limit_s``), ``after``: the trial's ``dut`` record, and ``reasons``."""

    def before(self) -> object: ...

    def during(self, limit_s: float) -> ContextManager: ...

    def after(self, before: object, during: object, eng: dict) -> dict: ...

    def reasons(self, eng: dict, dut: dict, reset_router: str | None) -> list[str]:
        """The lab's own reasons a trial is ``tester_limited`` (frames the
        tester, not the DUT, lost in this lab); ``reset_router``: a router
        reset during the trial."""


class Emulated:
    """The emulated lab with namespace routers (:mod:`.build`): built by
    v6bench on this machine, or the one ``lab up`` built."""

    #: How its routers are made (lab/build.Routers).
    routers: build.Routers = build.NAMESPACE_ROUTERS
    #: The tunnels its routers have (stand-ins of the kernel's own datapaths, lab/tunnel.py).
    tunnels = tunnel.TUNNELS
    tunnels_where = 'on namespace routers (gre: use router = "vm")'
    tunnel_stand_in = True

    def dut_config(self, d: dict, spec: LabSpec) -> DutConfig:
        """The ``[dut]`` table (lab/spec.dut_config), its tunnel one these routers have."""
        dut = lab_spec.dut_config(d, spec)
        self.tunnel(dut.tunnel)
        return dut

    def tunnel(self, name: str) -> Tunnel | None:
        """The tunnel ``name`` (``[dut] tunnel``) on these routers; None for none."""
        return tunnel.find(name, self.tunnels, self.tunnels_where) if name else None

    def tunnel_record(self, lab: Lab) -> dict | None:
        return tunnel.record(self.tunnel(lab.dut_config.tunnel), self.tunnel_stand_in)

    def up(self, site: Site, spec: LabSpec, dut: DutConfig | None) -> LabState:
        """Builds the lab ``lab up`` keeps (:func:`control.up`)."""
        return control.up(site, spec.topology, spec.link_speed_bps, spec.mtu, spec.cpu_arrangement,
                          dut or DutConfig(), self.routers)

    @contextmanager
    def take(self, site: Site, spec: LabSpec, dut: DutConfig | None, apply: bool = True) -> Iterator[Lab]:
        """The lab that is up (the options given must match it), or a
        temporary one built now and removed afterwards
        (:func:`control.for_trial`); ``apply`` is for external labs."""
        with control.for_trial(site, spec.topology, spec.link_speed_bps, spec.mtu, spec.cpu_arrangement, dut,
                               self.routers) as lab:
            yield lab

    def check_test(self, spec: LabSpec, test_kind: str, runs_host_stacks: bool, reset_kinds: tuple[str, ...]) -> None:
        """What a test of ``test_kind`` needs of this kind of lab, checked
        before any lab is used; errors name the test's fields. The
        emulated lab has all (its path's rules are trial/fit.py's)."""

    def observer(self, lab: Lab) -> Observer:
        return observe.LabObserver(lab)

    def reset(self, site: Site, lab: Lab, kind: str) -> tuple[Lab, dict]:
        return lab_reset.reset(site, lab, kind)

    def describe(self, lab: Lab) -> str:
        return control.describe(lab)

    def dut_record(self, lab: Lab) -> dict:
        """Its rule sets, qdiscs, routes and links (:func:`configured.datapaths`)."""
        return {"config": lab.dut or {}, "rulesets": configured.rulesets(list(lab.nodes)),
                "datapaths": configured.datapaths(list(lab.nodes), table=lab.fib is not None),
                "description": control.describe(lab)}

    def record(self, lab: Lab) -> dict:
        return {"kind": "emulated", "topology": lab.topology, "link_speed_bps": lab.link_speed_bps,
                "mtu": lab.mtu.to_json(), "temporary": lab.temporary, "shared_machine": lab.shared_machine,
                "cpu_plan": lab.cpu_plan.to_json(),
                "napi_threads": [{k: t.get(k) for k in ("node", "ifname", "cpu", "policy", "priority")} for t in lab.napi],
                "sysctls": lab.sysctls, "router": lab.router, "tunnel": self.tunnel_record(lab),
                "fib": lab.fib}


class VmRouters(Emulated):
    """The emulated lab with VM routers (:mod:`.vm_lab`): observed from
    QEMU's threads and the guests' agents, reset inside the guest; its
    tunnels are the real devices of Debian's kernel."""

    routers = vm_lab.VM_ROUTERS
    tunnels = tunnel.VM_TUNNELS
    tunnels_where = "on VM routers"
    tunnel_stand_in = False

    def observer(self, lab: Lab) -> Observer:
        return vm_lab.VmObserver(lab)

    def reset(self, site: Site, lab: Lab, kind: str) -> tuple[Lab, dict]:
        return vm_lab.reset(site, lab, kind)

    def record(self, lab: Lab) -> dict:
        return {**super().record(lab), **vm_lab.record(lab)}


class External:
    """A router v6bench did not build, declared by a lab file
    (:mod:`.external`): observed over SNMP, configured and reset by the
    file's commands, told a table over BGP where the file allows it."""

    #: The ``[dut]`` keys an external lab takes: a table its DUT learns over BGP (lab/bgp_speaker.py).
    DUT_KEYS = ("table", "table_seed", "destinations")

    def dut_config(self, d: dict, spec: LabSpec) -> DutConfig:
        """The DUT is configured by the file's ``apply`` command: of
        ``[dut]`` it takes only a table (:data:`DUT_KEYS`), which it learns
        over BGP, and only if the file allows it (``[table]``)."""
        ext = spec.external
        for k in d:
            if k not in self.DUT_KEYS:
                raise UsageError(f"the DUT of external lab {ext.path} is configured by the file's dut.apply "
                                 "command, not by v6bench", k)
        dut = lab_spec.dut_config(d, spec)
        if dut.has_table and ext.table is None:
            raise UsageError(f"external lab {ext.path} does not allow a table: the DUT would be told routes "
                             "to much of the address space over BGP; its file allows it with [table] "
                             "allow_full_table = true (docs/external-lab.md)", "table")
        return dut

    def tunnel(self, name: str) -> None:
        """None: an external DUT's tunnels are its own configuration."""
        return None

    def tunnel_record(self, lab: Lab) -> None:
        return None

    def up(self, site: Site, spec: LabSpec, dut: DutConfig | None) -> LabState:
        raise UsageError(f"lab up builds the emulated lab; external lab {spec.external.path} is used as it is", "file")

    @contextmanager
    def take(self, site: Site, spec: LabSpec, dut: DutConfig | None, apply: bool = True) -> Iterator[Lab]:
        """Ports checked, configuration applied unless not ``apply``, the
        agent polled; with a table, the table announced for this use
        (:mod:`.bgp_speaker`) and withdrawn when it ends."""
        with state.locked(site, f"external lab {spec.external.name}"):
            lab = external.take(spec.external, apply)
            lab = replace(lab, telemetry=snmp_observe.connect(lab.snmp_dut))
            if dut is None or not dut.has_table:
                yield lab
                return
            try:
                speaker, fib = bgp_speaker.start(site, spec.external, dut)
                yield replace(lab, fib=fib, dut_config=dut, speaker=speaker)
            finally:
                if os.getpid() == lab.owner_pid:  # never from a forked helper
                    bgp_speaker.remove(site)

    def check_test(self, spec: LabSpec, test_kind: str, runs_host_stacks: bool, reset_kinds: tuple[str, ...]) -> None:
        """The tester hosts' own stacks (host-stack tests) exist only in the
        emulated lab; a reset needs the file's command for each of its kinds."""
        ext = spec.external
        if runs_host_stacks:
            raise UsageError(f"{test_kind} runs the tester hosts' own kernels, which only the emulated lab has: "
                             f"not on external lab {ext.path}", "kind")
        for kind in reset_kinds:
            if not getattr(ext.dut, f"reset_{kind}"):
                raise UsageError(f"a {kind} reset needs the lab file's dut.reset_{kind} command ({ext.path})", "kinds")

    def observer(self, lab: Lab) -> Observer:
        """Over SNMP; while a table is announced, the BGP sessions checked after every trial too."""
        snmp = snmp_observe.SnmpObserver(lab.snmp_dut, lab.telemetry)
        return bgp_speaker.Watched(snmp, lab.speaker, lab.spec) if lab.speaker else snmp

    def reset(self, site: Site, lab: Lab, kind: str) -> tuple[Lab, dict]:
        return lab, external.reset(lab, kind)

    def describe(self, lab: Lab) -> str:
        return lab.describe()

    def dut_record(self, lab: Lab) -> dict:
        """The lab file's configuration file, the apply command's outcome and what the DUT's agent said of itself."""
        d = lab.spec.dut
        return {"config": lab.dut_config.to_json() if lab.fib else {}, "description": self.describe(lab),
                "config_file": d.config_file, "config_text": d.config_text, "applied": lab.applied,
                "telemetry": lab.telemetry}

    def record(self, lab: Lab) -> dict:
        return {"topology": lab.topology, "link_speed_bps": lab.link_speed_bps, "mtu": lab.mtu.to_json(),
                "temporary": False, "cpu_plan": lab.cpu_plan.to_json(), "napi_threads": [], "sysctls": {},
                **lab.record()}


#: Every kind of lab: a lab's and a lab spec's ``kind`` is a key.
REGISTRY = {"ns": Emulated(), "vm": VmRouters(), "external": External()}


def of(lab: Lab):
    """The backend of a lab in use."""
    return REGISTRY[lab.kind]


def for_spec(spec: LabSpec):
    """The backend a lab spec asks for."""
    return REGISTRY[spec.kind]
