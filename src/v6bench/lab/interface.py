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

Three kinds of lab implement it, one backend each (:mod:`.backends`): the
emulated lab (:class:`~.emulated.state.LabState`, built by v6bench in namespaces
on this machine) with namespace routers or with VM routers, and an
external lab (:class:`~.external.external.ExternalLab`, a router v6bench did not
build, declared by a lab file). The functions here are the interface the
rest of v6bench calls; each hands the lab to its backend.
"""

from __future__ import annotations

from typing import ContextManager

from . import backends
from .backends import Lab, Observer  # noqa: F401  (the interface's types, defined beside their implementations)
from .model.dut import DutConfig
from .model.site import Site
from .model.spec import LabSpec
from .emulated.state import LabState
from .model.tunnel import Tunnel


def for_trial(site: Site, spec: LabSpec, dut: DutConfig | None, apply: bool = True) -> ContextManager[Lab]:
    """The lab a trial or a scenario's tests run on, locked throughout:
    the emulated lab that is up or one built for this use
    (:func:`control.for_trial`), or an external lab taken into use
    (ports checked, configuration applied unless not ``apply``, agent
    polled, a table announced)."""
    return backends.for_spec(spec).take(site, spec, dut, apply)


def observer(lab: Lab) -> Observer:
    return backends.of(lab).observer(lab)


def reset(site: Site, lab: Lab, kind: str) -> tuple[Lab, dict]:
    """Resets the DUT (``soft`` or ``hard``) during a trial: the lab after
    it (the emulated lab's kernel threads change) and its timing."""
    return backends.of(lab).reset(site, lab, kind)


def clear_connections(lab: Lab) -> float:
    """Empties the connections the DUT tracks (RFC 9693: every measurement
    of a DUT that keeps state starts from an empty table); the time the
    deletion took [s]."""
    return backends.of(lab).clear_connections(lab)


def describe(lab: Lab) -> str:
    return backends.of(lab).describe(lab)


def dut_record(lab: Lab) -> dict:
    """The DUT as configured, for a run's environment: in the emulated lab
    its rule sets, qdiscs, routes and links (:func:`configured.datapaths`); an
    external lab's configuration file, the apply command's outcome and what
    the DUT's agent said of itself."""
    return backends.of(lab).dut_record(lab)


def record(lab: Lab) -> dict:
    """The lab part of every trial result (``docs/trial-result.md``)."""
    return backends.of(lab).record(lab)


def dut_config(d: dict, spec: LabSpec) -> DutConfig:
    """The ``[dut]`` table as the kind of lab of ``spec`` takes it (an
    external lab takes a table at most; a tunnel must be one its routers
    have); errors name the field relative to the table."""
    return backends.for_spec(spec).dut_config(d, spec)


def up(site: Site, spec: LabSpec, dut: DutConfig | None) -> LabState:
    """Builds the emulated lab ``lab up`` keeps, its routers made as ``spec`` says."""
    return backends.for_spec(spec).up(site, spec, dut)


def tunnel(lab: Lab) -> Tunnel | None:
    """The tunnel the lab's path carries between R1 and R2 (its overhead
    counts in the line rate, trial/path.py), as its routers make it; None
    without one or on an external lab (its tunnels are its own)."""
    return backends.of(lab).tunnel(lab.dut_config.tunnel)


def spec_tunnel(spec: LabSpec, dut: DutConfig) -> Tunnel | None:
    """:func:`tunnel` of the lab ``spec`` and ``dut`` would give, before any lab."""
    return backends.for_spec(spec).tunnel(dut.tunnel)


def tunnel_record(lab: Lab) -> dict | None:
    """The lab's tunnel as ``lab status --json`` and every result record it (lab/tunnel.record)."""
    return backends.of(lab).tunnel_record(lab)
