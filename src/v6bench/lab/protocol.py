"""What the layers above ``lab/`` may use of a lab: the :class:`Lab` in
use, the :class:`Backend` of each kind of lab (lab/backends.py) and the
:class:`Observer` around a trial. Everything above ``lab/`` holds a lab as
a :class:`Lab` and acts on it through lab/interface.py; no module there
imports a kind's folder (``emulated/``, ``vm/``, ``external/``), which
tests/unit/test_layers.py checks by the imports' syntax trees, and the
type checker (``make test``) checks that each kind's lab and backend are
what these protocols say.

A new kind of lab is a folder under ``lab/`` with a lab class and a
backend class that satisfy these protocols, and one line in
:data:`v6bench.lab.backends.REGISTRY` (docs/architecture.md).
"""

from __future__ import annotations

from typing import Any, ContextManager, Protocol, TypeVar

from .model.cpus import CpuPlan
from .model.dut import DutConfig
from .model.mtu import Mtus
from .model.site import Site
from .model.spec import LabSpec
from .model.translation import Addresses
from .model.tunnel import Tunnel

#: A record as stored and printed (JSON objects: a lab's nodes, its table, what was observed).
Record = dict[str, Any]


class Lab(Protocol):
    """A lab in use, whoever built the DUT: what a trial reads of it.

    - **ports**: the tester nodes ``t1``, ``t2`` (``nodes``, ``node(name)``),
      each with its interface, namespace if any, tester addresses and the
      DUT's gateway address per family; the MAC is the interface's own (the
      engine reads it) and the gateway's is learned by ARP/ND;
    - **the path and its line rate**: ``topology`` (the shape the path and
      fit rules see), ``link_speed_bps`` and ``mtu`` (trial/path.py turns
      them into the frames on each link and the highest rate);
    - **the tester's CPUs** (``cpu_plan``), the namespaces the engine may
      open ports in (``netns_prefix``; ``allow_root_netns``: this machine's
      own interfaces, declared by a lab file) and the addresses it may send
      to (``allow_other_addresses``);
    - **the DUT**: its configuration (``dut_config``), where its NAT64 puts
      the other family (``translator_addresses``), the table it holds
      (``fib``, ``table_new``, ``fib_learning_timeout_s``), whether it tracks
      connections of test frames (``keeps_state``: its configuration's, or
      its routers' data plane's);
    - **the environment**: ``lab_kind`` (a key of lab/backends.REGISTRY),
      ``kernel``, ``shared_machine`` (the DUT runs on the tester's machine),
      ``napi`` and ``sysctls`` (the emulated lab's kernel threads and
      settings; empty elsewhere), ``owner_pid`` (the process that took it).
    """

    @property
    def lab_kind(self) -> str: ...
    @property
    def topology(self) -> str: ...
    @property
    def link_speed_bps(self) -> float: ...
    @property
    def mtu(self) -> Mtus: ...
    @property
    def cpu_plan(self) -> CpuPlan: ...
    @property
    def dut_config(self) -> DutConfig: ...
    @property
    def nodes(self) -> tuple[Record, ...]: ...
    @property
    def napi(self) -> tuple[Record, ...]: ...
    @property
    def sysctls(self) -> Record: ...
    @property
    def kernel(self) -> str: ...
    @property
    def owner_pid(self) -> int: ...
    @property
    def fib(self) -> Record | None: ...
    @property
    def table_new(self) -> bool: ...
    @property
    def keeps_state(self) -> bool: ...
    @property
    def fib_learning_timeout_s(self) -> float | None:
        """How long frames may wait for the DUT to learn a table told over BGP
        (trial/fib_learning.py); None where the lab checks the learning itself."""
    @property
    def translator_addresses(self) -> Addresses: ...
    @property
    def allow_root_netns(self) -> bool: ...
    @property
    def allow_other_addresses(self) -> bool: ...
    @property
    def netns_prefix(self) -> str | None: ...
    @property
    def shared_machine(self) -> bool: ...

    def node(self, name: str) -> Record:
        """The node called ``name`` (``KeyError`` if the lab has none)."""

    def with_fib(self, fib: Record | None) -> Lab:
        """The same lab with its table record ``fib`` (the learning time filled in, trial/fib_learning.py)."""


class Observer(Protocol):
    """Observations around one trial: ``before`` the engine starts,
    ``during`` it (a context manager around the engine, at most
    ``limit_s``; ``traffic_s``, the trial's traffic, None when it is not
    timed), ``after``: what was observed of the DUT (stored as the
    trial result's ``dut`` record), and ``reasons``. What ``before`` and
    ``during`` give is the observer's own (``Any`` here): only its
    ``after`` reads it."""

    def before(self) -> Any: ...

    def during(self, limit_s: float, traffic_s: float | None = None) -> ContextManager[Any]: ...

    def after(self, before: Any, during: Any, eng: Record) -> Record: ...

    def reasons(self, eng: Record, observed: Record, reset_router: str | None) -> list[str]:
        """The lab's own reasons a trial is ``tester_limited`` (frames the
        tester, not the DUT, lost in this lab); ``reset_router``: a router
        reset during the trial."""


#: The lab class of one kind (its backend's ``Backend[LabT]``).
LabT = TypeVar("LabT", bound=Lab)


class Backend(Protocol[LabT]):
    """Every action that depends on the kind of lab, for one kind:

    - ``dut_config``: the ``[dut]`` table as this kind of lab takes it, and
      ``tunnel``: the tunnel mechanism its routers give a ``[dut] tunnel``;
    - ``check_test``: what a test needs of the kind of lab, before any lab;
      ``check_machine``: what this machine must have installed to build it;
      ``empties_connections``: whether RFC 9693's tests can empty its DUT's
      connection table (``clear_connections``) and set how long it keeps an
      idle connection (``hold_connections``); ``restabilize``: waits out
      what an earlier trial left in the DUT (its incomplete datagrams); ``routes_address_ranges``:
      whether its routers route the ranges of many addresses
      (lab/model/topology.SOURCES, DESTINATIONS);
    - ``up``: the lab ``lab up`` builds and keeps; ``take``: the lab a trial
      or a scenario runs on, locked throughout (built or taken into use,
      configured, and undone when the use ends);
    - ``observer``: the observations around one trial; ``reset``: the DUT
      reset during a trial (RFC 2544 §26.6), and the lab after it;
    - ``describe``, ``dut_record``, ``record``, ``tunnel_record``: the lab
      in words, the DUT as configured for a run's environment, and the lab
      part of every trial result (docs/trial-result.md);
    - ``status``, ``down``, ``status_record``: the lab ``lab up`` keeps (of
      the kind lab/backends.KEPT names): whether one is up, removing it, and
      the lab as ``lab status --json`` shows it; ``lab_table``: the ``[lab]`` table that gives this lab again;
      ``table_offer``: what a lab check says of the table the DUT would be
      told; ``prepare``: what the kind needs made before its first use
      (``lab prepare``), in words.

    Generic over the kind's own lab class (``LabT``): each kind declares
    its backend as ``Backend[ItsLab]`` in its folder, so the type checker
    holds every method to the lab that kind makes and takes.
    """

    empties_connections: bool
    routes_address_ranges: bool

    def dut_config(self, d: Record, spec: LabSpec) -> DutConfig: ...

    def tunnel(self, name: str) -> Tunnel | None: ...

    def tunnel_record(self, lab: LabT) -> Record | None: ...

    def check_test(self, spec: LabSpec, test_kind: str, runs_host_stacks: bool,
                   reset_kinds: tuple[str, ...]) -> None: ...

    def check_machine(self, spec: LabSpec, dut: DutConfig) -> None: ...

    def up(self, site: Site, spec: LabSpec, dut: DutConfig | None) -> LabT: ...

    def take(self, site: Site, spec: LabSpec, dut: DutConfig | None, apply: bool = True) -> ContextManager[LabT]: ...

    def observer(self, lab: LabT) -> Observer: ...

    def reset(self, site: Site, lab: LabT, kind: str) -> tuple[LabT, Record]: ...

    def clear_connections(self, lab: LabT) -> float: ...

    def hold_connections(self, lab: LabT, timeout_s: float) -> float | None: ...

    def restabilize(self, lab: LabT) -> Record | None: ...

    def describe(self, lab: LabT) -> str: ...

    def dut_record(self, lab: LabT) -> Record: ...

    def record(self, lab: LabT) -> Record: ...

    def status(self, site: Site) -> tuple[LabT | None, bool]: ...

    def down(self, site: Site) -> list[str]: ...

    def status_record(self, lab: LabT) -> Record: ...

    def lab_table(self, lab: LabT) -> Record: ...

    def table_offer(self, spec: LabSpec) -> str | None: ...

    def prepare(self) -> str | None: ...
