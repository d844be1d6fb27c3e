"""The kinds of lab, one backend each, chosen once from :data:`REGISTRY`.

A lab in use (a :class:`~.protocol.Lab`) and the spec it is made from
(:class:`~.model.spec.LabSpec`) each say their ``lab_kind``; :func:`of` and
:func:`for_spec` look the backend up (a :class:`~.protocol.Backend`), and
every action that depends on the kind is a method of it.

Three kinds, each backend in its own folder: ``ns`` (the emulated lab
with namespace routers, :mod:`.emulated.backend`), ``vm`` (the emulated
lab with VM routers, :mod:`.vm.backend`, beside it on the emulated lab's
base) and ``external`` (a router v6bench did not build,
:mod:`.external.backend`). A fourth kind is its own folder with a lab and
a backend class satisfying lab/protocol.py (its ``BACKEND`` typed
``Backend[ItsLab]``), and one more line in :data:`REGISTRY`
(docs/architecture.md).
"""

from __future__ import annotations

from typing import Any

from pathlib import Path

from .emulated import backend as ns
from .external import backend as external
from .external import lab_file
from .model import spec as model_spec
from .model.spec import LabSpec
from .protocol import Backend, Lab
from .vm import backend as vm

#: Every kind of lab: a lab's and a lab spec's ``lab_kind`` is a key. Each kind's ``BACKEND`` is typed in its
#: own folder as ``Backend[ItsLab]``; here the kinds are one mapping, whose labs only their own backend reads.
REGISTRY: dict[str, Backend[Any]] = {"ns": ns.BACKEND, "vm": vm.BACKEND, "external": external.BACKEND}

#: The kind whose backend answers for the lab ``lab up`` keeps on this machine (one at a time; the
#: emulated lab's state says whether its routers are namespaces or VMs).
KEPT = "ns"


def lab_spec(d: dict[str, Any], base: Path | None = None) -> LabSpec:
    """The ``[lab]`` table ``d`` as a :class:`LabSpec`: a lab file (``file``, relative to ``base``) read by
    the kind whose labs come from one (``external``, lab/external/lab_file.py); every other table by
    lab/model/spec.lab_spec."""
    return lab_file.lab_spec(d, base) if "file" in d else model_spec.lab_spec(d, base)


def of(lab: Lab) -> Backend[Any]:
    """The backend of a lab in use."""
    return REGISTRY[lab.lab_kind]


def for_spec(spec: LabSpec) -> Backend[Any]:
    """The backend a lab spec asks for."""
    return REGISTRY[spec.lab_kind]
