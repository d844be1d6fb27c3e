"""Each test of a campaign fitted to the labs it runs on, before any lab
is used: what its kind needs of the kind of lab (lab/interface.check_test,
``empties_connections``), its frames on the scenario's topology and path
with the rules a trial checks again on the lab it gets
(:mod:`v6bench.trial.fit`), a host-stack test's payload on the path, and
connections through a DUT that keeps them. Errors name fields of the test.
"""

from __future__ import annotations

from ..core.errors import Field, UsageError
from ..core import frames
from ..lab import interface
from ..lab.model.dut import DutConfig
from ..lab.model.spec import LabSpec
from ..methods import registry
from ..trial import fit
from ..trial.path import LabPath
from .model import Scenario, TestSpec


def check_on_scenario(t: TestSpec, sc: Scenario, lab_path: LabPath) -> None:
    """``t`` on scenario ``sc``'s lab and DUT (``lab_path``: its path from
    t1 to t2); an error names the scenario and the test's field."""
    try:
        _check_on_lab(t, sc.lab, lab_path)
        fit.check_on_dut(t.traffic, sc.dut)
        _check_connections(t, sc.dut, sc.lab)
    except UsageError as e:
        raise UsageError(f"in scenario {sc.name}: {e.message}" if sc.name else e.message,
                         ("test", t.index, *e.field)) from None


def _check_on_lab(t: TestSpec, lab: LabSpec, lab_path: LabPath) -> None:
    """What a test needs of the lab it runs on (``lab_path``: its path from
    t1 to t2), with the rules a trial checks (:mod:`v6bench.trial.fit`);
    errors name fields of the test."""
    k = registry.kind(t.kind)
    interface.check_test(lab, t.kind, k.runs_host_stacks, k.resets(t.params))
    if not k.sends_frames:  # its payloads on the path (a host-stack test sends no frames)
        _check_payloads(t, k.whole_payload_bytes(t.params), lab_path)
        return
    for j, mix in enumerate(t.matrix.mixes):
        for n, fs in enumerate(t.matrix.frame_sizes):
            try:
                fit.check_on_topology(t.traffic, lab.topology, mesh=k.mesh)
                if k.mesh:
                    fit.check_mesh(t.params.pattern, mix, fs, lab.topology, lab.link_speed_bps, lab.mtu)
                else:
                    fit.check_on_path(t.traffic, mix, fs, lab_path)
            except UsageError as e:
                raise place_in_test(e, (), j, n) from None


def _check_payloads(t: TestSpec, whole_bytes: int, lab_path: LabPath) -> None:
    """A host-stack test's families on the path, and ``whole_bytes`` of IP payload carried whole."""
    for j, mix in enumerate(t.matrix.mixes):
        version = 4 if mix.ipv4_pct else 6
        why = lab_path.problem(version, 0)
        if why:
            raise UsageError(f"{mix}: {why}", ("mixes", j))
        largest = lab_path.largest_payload(version)
        if whole_bytes > largest:
            raise UsageError(f"{whole_bytes} bytes do not fit the path: IPv{version} carries at "
                             f"most {largest} bytes of IP payload whole (path MTU {min(lab_path.mtus())})",
                             "payload_sizes")


def _check_connections(t: TestSpec, dut: DutConfig, lab: LabSpec) -> None:
    """A test that opens connections (:attr:`~v6bench.methods.registry.Kind.opens_connections`)
    needs a DUT that keeps them, at every mix (:func:`v6bench.trial.fit.check_connections`),
    on a kind of lab that empties its table (the backend's ``empties_connections``)."""
    k = registry.kind(t.kind)
    if not k.opens_connections:
        return
    if not interface.empties_connections(lab):
        raise UsageError(f"{k.name} empties R1's connection table before each measurement, which only namespace "
                         f"routers let v6bench do (this lab's routers: {lab.lab_kind})", "kind")
    for j, mix in enumerate(t.matrix.mixes):
        for bi in sorted({d == "bi" for d in t.matrix.directions}):
            try:
                fit.check_connections(t.traffic, mix, bi, dut)
            except UsageError as e:
                raise UsageError(e.message, ("mixes", j) if e.field == ("mix",) else e.field) from None


def place_in_test(e: UsageError, where: Field, mix_index: int, size_index: int) -> UsageError:
    """An error of :mod:`v6bench.core.frames` or :mod:`v6bench.trial.fit` (a trial's field names)
    placed in ``test[i]`` (``mixes[j]``, ``frame_sizes[n]``, ``directions``)."""
    name = e.field[0] if e.field else None
    index = {"mix": (mix_index,), "frame_size": (size_index,)}.get(name, ())
    return UsageError(e.message, (*where, frames.TEST_FIELDS.get(name, name), *index) if name else where)
