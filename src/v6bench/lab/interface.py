"""The lab interface: the functions the rest of v6bench calls on a lab,
whoever built the DUT (what a lab in use gives a trial is
:class:`~.protocol.Lab`). Each hands the lab, or the spec it is made
from, to the backend of its kind (:mod:`.backends`); the machine's lab
lock and the lab ``lab up`` keeps (the emulated lab, whatever its
routers) are this machine's, whatever the kind.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ContextManager

from . import backends
from .dataplanes import registry as data_plane_registry
from .machine import lock as machine_lock
from .model.dut import DutConfig
from .model.site import Site
from .model.spec import LabSpec
from .model import dslite, xlat
from .model.tunnel import Tunnel
from .protocol import Lab, Observer, Record


def for_trial(site: Site, spec: LabSpec, dut: DutConfig | None, apply: bool = True) -> ContextManager[Lab]:
    """The lab a trial or a scenario's tests run on, locked throughout:
    the emulated lab that is up or one built for this use
    (:func:`control.for_trial`), or an external lab taken into use
    (ports checked, configuration applied unless not ``apply``, agent
    polled, a table announced)."""
    return backends.for_spec(spec).take(site, spec, dut, apply)


def lab_spec(d: dict[str, Any], base: Path | None = None) -> LabSpec:
    """The ``[lab]`` table ``d`` as a :class:`LabSpec`, whatever its kind (lab/backends.lab_spec): every
    front end's one route (a campaign file's table, ``cli/options.py``'s)."""
    return backends.lab_spec(d, base)


def data_planes() -> dict[str, str]:
    """Every data plane a router v6bench builds can forward with (``[lab] data_plane``), in words, by name."""
    return {name: plane.summary for name, plane in data_plane_registry.REGISTRY.items()}


def keeps_state(spec: LabSpec, dut: DutConfig) -> bool:
    """Whether the lab of ``spec`` with DUT configuration ``dut`` tracks connections of test frames (the
    DUT's configuration or its routers' data plane: lab/dataplanes/registry.keeps_state)."""
    return data_plane_registry.keeps_state(dut, spec.data_plane)


def observer(lab: Lab) -> Observer:
    return backends.of(lab).observer(lab)


def reset(site: Site, lab: Lab, kind: str) -> tuple[Lab, Record]:
    """Resets the DUT (``soft`` or ``hard``) during a trial: the lab after
    it (the emulated lab's kernel threads change) and its timing."""
    return backends.of(lab).reset(site, lab, kind)


def clear_connections(lab: Lab) -> float:
    """Empties the connections the DUT tracks (RFC 9693: every measurement
    of a DUT that keeps state starts from an empty table); the time the
    deletion took [s]."""
    return backends.of(lab).clear_connections(lab)


def hold_connections(lab: Lab, timeout_s: float) -> float | None:
    """Sets how long the DUT keeps an idle connection (UDP, replied or not) to ``timeout_s`` for RFC
    9693's measurements and the trials after a preliminary phase; the timeout then in force [s], read
    back (a connection idle longer is gone); None where the lab can neither set nor read it (a VM
    router's guest, an external DUT)."""
    return backends.of(lab).hold_connections(lab, timeout_s)


def restabilize(lab: Lab) -> Record | None:
    """Waits until the DUT holds no incomplete datagram an earlier trial left (RFC 2544 §23: the DUT
    restabilizes between trials; lab/emulated/leftovers.py); what it held and the wait, None when it held
    none or the lab cannot see them (an external DUT)."""
    return backends.of(lab).restabilize(lab)


def describe(lab: Lab) -> str:
    return backends.of(lab).describe(lab)


def dut_record(lab: Lab) -> Record:
    """The DUT as configured, for a run's environment: in the emulated lab
    its rule sets, qdiscs, routes and links (:func:`configured.datapaths`); an
    external lab's configuration file, the apply command's outcome and what
    the DUT's agent said of itself."""
    return backends.of(lab).dut_record(lab)


def record(lab: Lab) -> Record:
    """The lab part of every trial result (``docs/trial-result.md``)."""
    return backends.of(lab).record(lab)


def dut_config(d: Record, spec: LabSpec) -> DutConfig:
    """The ``[dut]`` table as the kind of lab of ``spec`` takes it (an
    external lab takes a table at most; a tunnel must be one its routers
    have); errors name the field relative to the table."""
    return backends.for_spec(spec).dut_config(d, spec)


def up(site: Site, spec: LabSpec, dut: DutConfig | None) -> Lab:
    """Builds the emulated lab ``lab up`` keeps, its routers made as ``spec`` says."""
    lab: Lab = backends.for_spec(spec).up(site, spec, dut)
    return lab


def tunnel(lab: Lab) -> Tunnel | None:
    """The tunnel the lab's path carries between R1 and R2 (its overhead
    counts in the line rate, trial/path.py), as its routers make it; None
    without one or on an external lab (its tunnels are its own). 464XLAT's
    IPv6-only link and DS-Lite's softwire count as one (:func:`_scenario_link`)."""
    return _scenario_link(lab.dut_config) or backends.of(lab).tunnel(lab.dut_config.tunnel)


def spec_tunnel(spec: LabSpec, dut: DutConfig) -> Tunnel | None:
    """:func:`tunnel` of the lab ``spec`` and ``dut`` would give, before any lab."""
    return _scenario_link(dut) or backends.for_spec(spec).tunnel(dut.tunnel)


def _scenario_link(dut: DutConfig) -> Tunnel | None:
    """The R1–R2 link of a transition scenario that is not a ``tunnel``: 464XLAT's (lab/model/xlat.LINK) or
    DS-Lite's (lab/model/dslite.LINK)."""
    return xlat.LINK if dut.xlat else dslite.LINK if dut.dslite else None


def tunnel_record(lab: Lab) -> Record | None:
    """The lab's tunnel as ``lab status --json`` and every result record it (lab/model/tunnel.record)."""
    return backends.of(lab).tunnel_record(lab)


def check_test(spec: LabSpec, test_kind: str, runs_host_stacks: bool, reset_kinds: tuple[str, ...]) -> None:
    """What a test of ``test_kind`` needs of the kind of lab ``spec`` asks for, checked before any lab is
    used (``runs_host_stacks``: it runs the tester hosts' own stacks; ``reset_kinds``: the DUT resets it
    makes); errors name the test's fields."""
    backends.for_spec(spec).check_test(spec, test_kind, runs_host_stacks, reset_kinds)


def check_machine(spec: LabSpec, dut: DutConfig) -> None:
    """What building the lab ``spec`` and ``dut`` ask for needs installed on
    this machine (a translator, QEMU, the VM router's image), checked before
    a run's self-test and first lab: a :class:`LabError` naming what is
    missing and how to install it."""
    backends.for_spec(spec).check_machine(spec, dut)


def routes_address_ranges(lab: Lab) -> bool:
    """Whether the lab's routers route the ranges of many addresses (core/frames.Traffic.addresses)."""
    return backends.of(lab).routes_address_ranges


def empties_connections(spec: LabSpec) -> bool:
    """Whether the DUT's connection table can be emptied before each of RFC 9693's measurements on the
    kind of lab ``spec`` asks for (:func:`clear_connections`)."""
    return backends.for_spec(spec).empties_connections


def lab_table(lab: Lab) -> Record:
    """The ``[lab]`` table that gives ``lab`` again (a trial's options are checked against it)."""
    return backends.of(lab).lab_table(lab)


def table_offer(spec: LabSpec) -> str | None:
    """What ``lab check`` says of the table the DUT of ``spec`` would be told; None where it is not told one."""
    return backends.for_spec(spec).table_offer(spec)


def prepare(kind: str) -> str | None:
    """Makes what labs of ``kind`` need before their first use (the VM
    router's guest image; ``make setup`` runs it); what was made, in words."""
    if kind not in backends.REGISTRY:
        raise KeyError(kind)
    return backends.REGISTRY[kind].prepare()


def lock(site: Site, what: str) -> ContextManager[None]:
    """Holds the machine's lab lock while the block runs (lab/machine/lock.py); ``what``: the holder, in words."""
    return machine_lock.locked(site, what)


def status(site: Site) -> tuple[Lab | None, bool]:
    """The lab ``lab up`` keeps on this machine (None if none is up) and
    whether a command is using it now; changes nothing."""
    return backends.REGISTRY[backends.KEPT].status(site)


def status_record(lab: Lab) -> Record:
    """``lab status --json`` of the lab :func:`status` gives (docs/trial-result.md)."""
    return backends.of(lab).status_record(lab)


def down(site: Site) -> list[str]:
    """Removes the lab that is up and anything a crashed run left; the namespaces removed."""
    return backends.REGISTRY[backends.KEPT].down(site)
