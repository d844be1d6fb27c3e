"""The kinds of lab, one backend each, chosen once from :data:`REGISTRY`.

A lab in use (:class:`~.emulated.state.LabState` of the emulated lab, or
:class:`~.external.external.ExternalLab`) and the spec it is made from
(:class:`~.model.spec.LabSpec`) each say their ``kind``; :func:`of` and
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

Three kinds, each backend in its own folder: ``ns`` (the emulated lab
with namespace routers, :mod:`.emulated.backend`), ``vm`` (the emulated
lab with VM routers, :mod:`.vm.backend`) and ``external`` (a router
v6bench did not build, :mod:`.external.backend`). A fourth kind is its
own folder with a backend class having these methods, and one more line
in :data:`REGISTRY` (docs/architecture.md).
"""

from __future__ import annotations

from typing import ContextManager, Protocol, Union

from .emulated.backend import Emulated
from .emulated.state import LabState
from .external.backend import External
from .external.external import ExternalLab
from .model.spec import LabSpec
from .vm.backend import VmRouters

#: A lab in use, of any kind (lab/interface.py says what a trial reads of it).
Lab = Union[LabState, ExternalLab]


class Observer(Protocol):
    """Observations around one trial: ``before`` the engine starts,
    ``during`` it (a context manager around the engine, at most
    ``limit_s``), ``after``: what was observed of the DUT (stored as the
    trial result's ``dut`` record), and ``reasons``."""

    def before(self) -> object: ...

    def during(self, limit_s: float) -> ContextManager: ...

    def after(self, before: object, during: object, eng: dict) -> dict: ...

    def reasons(self, eng: dict, observed: dict, reset_router: str | None) -> list[str]:
        """The lab's own reasons a trial is ``tester_limited`` (frames the
        tester, not the DUT, lost in this lab); ``reset_router``: a router
        reset during the trial."""


#: Every kind of lab: a lab's and a lab spec's ``kind`` is a key.
REGISTRY = {"ns": Emulated(), "vm": VmRouters(), "external": External()}


def of(lab: Lab):
    """The backend of a lab in use."""
    return REGISTRY[lab.kind]


def for_spec(spec: LabSpec):
    """The backend a lab spec asks for."""
    return REGISTRY[spec.kind]
