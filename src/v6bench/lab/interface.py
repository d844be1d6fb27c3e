"""What a trial needs of a lab, whoever built the DUT: the lab interface.

A lab gives a trial

- **ports**: the tester nodes ``t1``, ``t2`` (``nodes``, ``node(name)``),
  each with its interface, namespace if any, tester addresses and the
  DUT's gateway address per family; the MAC is the interface's own (the
  engine reads it) and the gateway's is learned by ARP/ND;
- **the path and its line rate**: ``topology`` (the shape the path and fit
  rules see), ``link_speed_bps`` and ``mtu`` (``trial/path.py`` turns them
  into the frames on each link and the highest rate);
- **the tester's CPUs** (``cpu_plan``) and the namespace rule the engine
  enforces (``netns_prefix``);
- **DUT actions**: a configuration applied when the lab is taken into use,
  and :func:`reset` (RFC 2544 §26.6);
- **observations** around each trial (:func:`observer`): the DUT's CPU and
  interface counters;
- **the environment record** (:func:`record`, :func:`describe`).

Two labs implement it: the emulated lab (:class:`~.state.LabState`, built
by v6bench in namespaces on this machine) and an external lab
(:class:`~.external.ExternalLab`, a router v6bench did not build,
declared by a lab file). This module is the one place that tells them apart.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import replace
from typing import ContextManager, Iterator, Protocol, Union

from . import bgp_speaker, control, external, observe, snmp_observe, tunnel, vm_lab
from . import reset as lab_reset
from . import state
from . import dut as dut_rules
from .dut import DutConfig
from .external import ExternalLab
from .site import Site
from .spec import LabSpec
from .state import LabState

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


@contextmanager
def for_trial(site: Site, spec: LabSpec, dut: DutConfig | None, apply: bool = True) -> Iterator[Lab]:
    """The lab a trial or a scenario's tests run on, locked throughout:
    an external lab taken into use (ports checked, configuration applied
    unless not ``apply``, agent polled), or the emulated lab
    (:func:`control.for_trial`)."""
    if spec.external is None:
        with control.for_trial(site, spec.topology, spec.link_speed_bps, spec.mtu, spec.cpu_arrangement, dut,
                               spec.router) as lab:
            yield lab
        return
    with state.locked(site, f"external lab {spec.external.name}"):
        lab = external.take(spec.external, apply)
        lab = replace(lab, telemetry=snmp_observe.connect(lab.snmp_dut))
        if dut is None or not dut.has_table:
            yield lab
            return
        try:  # the table announced for this use (lab/bgp_speaker.py), withdrawn when it ends
            speaker, fib = bgp_speaker.start(site, spec.external, dut)
            yield replace(lab, fib=fib, dut_config=dut, speaker=speaker)
        finally:
            if os.getpid() == lab.owner_pid:  # never from a forked helper
                bgp_speaker.remove(site)


def observer(lab: Lab) -> Observer:
    if isinstance(lab, ExternalLab):
        snmp = snmp_observe.SnmpObserver(lab.snmp_dut, lab.telemetry)
        return bgp_speaker.Watched(snmp, lab.speaker, lab.spec) if lab.speaker else snmp
    if lab.router == "vm":
        return vm_lab.VmObserver(lab)
    return observe.LabObserver(lab)


def reset(site: Site, lab: Lab, kind: str) -> tuple[Lab, dict]:
    """Resets the DUT (``soft`` or ``hard``) during a trial: the lab after
    it (the emulated lab's kernel threads change) and its timing."""
    if isinstance(lab, ExternalLab):
        return lab, external.reset(lab, kind)
    if lab.router == "vm":
        return vm_lab.reset(site, lab, kind)
    return lab_reset.reset(site, lab, kind)


def describe(lab: Lab) -> str:
    return lab.describe() if isinstance(lab, ExternalLab) else control.describe(lab)


def dut_record(lab: Lab) -> dict:
    """The DUT as configured, for a run's environment: in the emulated lab
    its rule sets, qdiscs, routes and links (:func:`dut.datapaths`); an
    external lab's configuration file, the apply command's outcome and what
    the DUT's agent said of itself."""
    if isinstance(lab, ExternalLab):
        d = lab.spec.dut
        return {"config": lab.dut_config.to_json() if lab.fib else {}, "description": describe(lab),
                "config_file": d.config_file,
                "config_text": d.config_text, "applied": lab.applied, "telemetry": lab.telemetry}
    return {"config": lab.dut or {}, "rulesets": dut_rules.rulesets(list(lab.nodes)),
            "datapaths": dut_rules.datapaths(list(lab.nodes), table=lab.fib is not None), "description": control.describe(lab)}


def record(lab: Lab) -> dict:
    """The lab part of every trial result (``docs/trial-result.md``)."""
    if isinstance(lab, ExternalLab):
        return {"topology": lab.topology, "link_speed_bps": lab.link_speed_bps, "mtu": lab.mtu.to_json(),
                "temporary": False, "cpu_plan": lab.cpu_plan.to_json(), "napi_threads": [], "sysctls": {},
                **lab.record()}
    return {"kind": "emulated", "topology": lab.topology, "link_speed_bps": lab.link_speed_bps,
            "mtu": lab.mtu.to_json(), "temporary": lab.temporary, "shared_machine": lab.shared_machine,
            "cpu_plan": lab.cpu_plan.to_json(),
            "napi_threads": [{k: t.get(k) for k in ("node", "ifname", "cpu", "policy", "priority")} for t in lab.napi],
            "sysctls": lab.sysctls, "router": lab.router, "tunnel": tunnel.describe(lab.dut_config.tunnel, lab.router),
            "fib": lab.fib, **(vm_lab.record(lab) if lab.router == "vm" else {})}
