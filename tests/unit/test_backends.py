"""The kinds of lab (lab/backends.py): one backend each, chosen once from
the registry by the lab's or the lab spec's ``kind``, and no module above
the lab telling the kinds apart itself."""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path

import pytest

from test_external_lab import EXAMPLE
from test_layers import python_imports

from v6bench.campaign import runner
from v6bench.campaign import spec as campaign_spec
from v6bench.campaign.model import Campaign
from v6bench.core.errors import LabError
from v6bench.lab import backends, interface
from v6bench.lab.emulated import translator
from v6bench.lab.model.spec import ROUTERS, LabSpec, lab_spec
from v6bench.lab.protocol import Backend
from v6bench.lab.vm import vm

SRC = Path(__file__).resolve().parents[2] / "src" / "v6bench"


def test_every_kind_of_lab_has_one_backend():
    assert set(backends.REGISTRY) == {*ROUTERS, "external"}
    assert len({id(b) for b in backends.REGISTRY.values()}) == len(backends.REGISTRY)
    for b in backends.REGISTRY.values():
        assert all(callable(getattr(b, m)) for m in vars(Backend) if not m.startswith("_"))
        assert all(isinstance(getattr(b, a), bool) for a in Backend.__annotations__)


def test_a_spec_asks_for_its_kind():
    assert backends.for_spec(LabSpec()) is backends.REGISTRY["ns"]
    assert backends.for_spec(LabSpec(lab_kind="vm")) is backends.REGISTRY["vm"]
    ext = interface.lab_spec({"file": str(EXAMPLE)})
    assert ext.lab_kind == "external" and backends.for_spec(ext) is backends.REGISTRY["external"]
    # Declared where the spec is made, not derived from its other fields: a new kind sets it and edits no LabSpec.
    assert "lab_kind" in LabSpec.__dataclass_fields__ and not isinstance(getattr(LabSpec, "lab_kind", None), property)


def test_nothing_above_the_lab_tells_the_kinds_apart():
    # The layers above lab/ read a lab through lab/interface.py; a kind test there would be an `if` the next kind
    # of lab has to add again.
    kind_test = re.compile(r"isinstance\([^)]*ExternalLab|\.router(_kind)?\s*[!=]=|\.lab_file is (not )?None")
    found = [f"{p.relative_to(SRC)}:{n}" for part in ("trial", "campaign", "cli", "methods", "report", "store")
             for p in sorted((SRC / part).rglob("*.py"))
             for n, line in enumerate(p.read_text().splitlines(), 1) if kind_test.search(line)]
    assert found == [], found


def test_the_lab_names_its_kinds_only_in_the_registry():
    # Inside lab/, what differs between namespace and VM routers is a backend's attribute (its routers, its
    # tunnels); a comparison with a kind's name is a place the next kind would have to find.
    kind_name = re.compile(r"""[!=]=\s*["'](ns|vm|external)["']|["'](ns|vm|external)["']\s*[!=]=""")
    found = [f"{p.relative_to(SRC)}:{n}" for p in sorted((SRC / "lab").rglob("*.py"))
             for n, line in enumerate(p.read_text().splitlines(), 1) if kind_name.search(line)]
    assert found == [], found


def test_each_kind_of_router_has_its_tunnels():
    ns, vm = backends.REGISTRY["ns"], backends.REGISTRY["vm"]
    assert ns.routers.router_kind == "ns" and vm.routers.router_kind == "vm"
    assert ns.tunnel("6in4").mechanism != vm.tunnel("6in4").mechanism
    assert ns.tunnel_stand_in and not vm.tunnel_stand_in


#: Each folder of lab/ and the folders it may import (docs/architecture.md, "The lab"): the model runs
#: nothing and imports no other folder; this machine's plumbing and the data planes build on the model; the
#: emulated lab and external labs on the first two (the emulated lab's routers on the data planes too); VM routers on all (a VM router's agent is read as an external router's).
FOLDERS = {"model": set(), "machine": {"model"}, "dataplanes": {"model"},
           "emulated": {"model", "machine", "dataplanes"}, "external": {"model", "machine"},
           "vm": {"model", "machine", "emulated", "external", "dataplanes"}}
#: What the layers above lab/ may import of it: the interface, the protocols, the model, this machine's plumbing.
ABOVE_MAY = ("v6bench.lab", "v6bench.lab.interface", "v6bench.lab.protocol", "v6bench.lab.model", "v6bench.lab.machine")
KIND_FOLDERS = ("emulated", "vm", "external")


def _folder(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if len(parts) > 3 and parts[1] == "lab" else None


def test_the_lab_folders_import_downward():
    found = {}
    for mod, targets in python_imports().items():
        here = _folder(mod)
        if here is None:
            continue
        assert here in FOLDERS, f"{mod}: a folder of lab/ without its place in FOLDERS"
        wrong = {t for t in targets if _folder(t) not in (None, here) and _folder(t) not in FOLDERS[here]}
        if wrong:
            found[mod] = wrong
    assert found == {}, found


def _allowed_above(target: str) -> bool:
    return any(target == m or target.startswith(m + ".") and m != "v6bench.lab" for m in ABOVE_MAY)


def test_nothing_above_the_lab_imports_a_kind():
    # Read by the imports' syntax trees (tests/unit/test_layers.py), so `from ..lab import emulated` and an import
    # inside a function count too.
    found = {mod: sorted(t for t in targets if t.startswith("v6bench.lab") and not _allowed_above(t))
             for mod, targets in python_imports().items() if not mod.startswith("v6bench.lab")}
    assert {m: t for m, t in found.items() if t} == {}


def test_a_new_kind_of_lab_is_its_folder_and_one_registry_line():
    # Outside a kind's own folder (and the kinds built on it, FOLDERS), only the registry imports it: a fourth
    # kind touches its folder and one line of lab/backends.py.
    found = {mod: sorted(t for t in targets if _folder(t) in KIND_FOLDERS)
             for mod, targets in python_imports().items()
             if _folder(mod) not in KIND_FOLDERS and mod != "v6bench.lab.backends"}
    assert {m: t for m, t in found.items() if t} == {}
    imported = {_folder(t) for t in python_imports()["v6bench.lab.backends"] if _folder(t) in KIND_FOLDERS}
    assert imported == set(KIND_FOLDERS)


def test_a_fourth_kind_is_reached_through_the_interface_by_its_registry_line(monkeypatch):
    # What docs/architecture.md says a new kind touches: its own classes and one line in the registry. The
    # interface hands every call to the backend of the lab's kind, without a branch of its own.
    from contextlib import contextmanager

    from v6bench.lab import interface

    class Loopback:
        lab_kind = "loopback"

    class LoopbackBackend:
        empties_connections = False

        def describe(self, lab):
            return f"a {lab.lab_kind} lab"

        def check_test(self, spec, test_kind, runs_host_stacks, reset_kinds):
            self.checked = (spec.lab_kind, test_kind, runs_host_stacks, reset_kinds)

        @contextmanager
        def take(self, site, spec, dut, apply=True):
            yield Loopback()

    backend = LoopbackBackend()
    monkeypatch.setitem(backends.REGISTRY, "loopback", backend)
    spec = LabSpec(lab_kind="loopback")
    interface.check_test(spec, "throughput", False, ())
    assert backend.checked == ("loopback", "throughput", False, ()) and not interface.empties_connections(spec)
    with interface.for_trial(None, spec, None) as lab:
        assert interface.describe(lab) == "a loopback lab"


def _campaign(lab: dict, dut: dict) -> Campaign:
    d = {"name": "needs", "lab": {"topology": "a", **lab}, "dut": dut,
         "test": [{"kind": "latency", "mixes": ["50/50"], "frame_sizes": [128], "loads": ["10%"]}]}
    return campaign_spec.from_dict(d, json.dumps(d), "needs")


class _SelfTestReached(Exception):
    pass


def _run_until_the_self_test(monkeypatch, c: Campaign) -> None:
    """``runner.run`` of ``c``, stopped where its self-test would start."""

    def reached(*a, **k):
        raise _SelfTestReached()

    monkeypatch.setattr(runner, "exclusive", lambda site, c: contextlib.nullcontext())
    monkeypatch.setattr(runner, "ensure_selftests", reached)
    runner.run(None, c, None, False, "v6bench run needs", progress=lambda s: None)


def test_a_run_without_the_vm_image_stops_before_its_self_test(monkeypatch, tmp_path):
    monkeypatch.setenv("V6BENCH_VM_DIR", str(tmp_path / "no-image"))
    monkeypatch.setattr(vm, "qemu_version", lambda: "QEMU emulator version 7.2.0")  # the image is what is missing
    with pytest.raises(LabError, match=r"no VM router image .*make setup"):
        _run_until_the_self_test(monkeypatch, _campaign({"router": "vm"}, {}))
    with pytest.raises(_SelfTestReached):  # namespace routers need no image
        _run_until_the_self_test(monkeypatch, _campaign({}, {}))


def test_a_run_of_nat64_on_namespace_routers_without_tayga_stops_before_its_self_test(monkeypatch):
    def missing() -> str:
        raise LabError("nat64 on namespace routers needs TAYGA")

    monkeypatch.setattr(translator, "binary", missing)
    with pytest.raises(LabError, match="TAYGA"):
        _run_until_the_self_test(monkeypatch, _campaign({}, {"nat64": "stateless"}))
    with pytest.raises(_SelfTestReached):  # without a translator TAYGA is not asked for
        _run_until_the_self_test(monkeypatch, _campaign({}, {}))


def test_the_vm_backend_stands_beside_the_namespace_backend_each_typed_to_its_lab():
    # The emulated lab's two kinds share a base (lab/emulated/backend.EmulatedBackend), neither inheriting the
    # other; every Backend method names the kind's own lab type (no `lab: Any`), and each kind's folder declares
    # its BACKEND as Backend[ItsLab], which the type checker (tests/unit/test_types.py) holds to the protocol.
    from v6bench.lab.emulated.backend import EmulatedBackend, NamespaceBackend
    from v6bench.lab.vm.backend import VmBackend

    assert not issubclass(VmBackend, NamespaceBackend) and not issubclass(NamespaceBackend, VmBackend)
    assert issubclass(VmBackend, EmulatedBackend) and issubclass(NamespaceBackend, EmulatedBackend)
    assert "lab: Any" not in (SRC / "lab" / "protocol.py").read_text()
    for kind, lab in (("emulated", "LabState"), ("vm", "LabState"), ("external", "ExternalLab")):
        assert f"BACKEND: Backend[{lab}] = " in (SRC / "lab" / kind / "backend.py").read_text(), kind
