"""The kinds of lab (lab/backends.py): one backend each, chosen once from
the registry by the lab's or the lab spec's ``kind``, and no module above
the lab telling the kinds apart itself."""

from __future__ import annotations

import re
from pathlib import Path

from test_external_lab import EXAMPLE

from v6bench.lab import backends
from v6bench.lab.model import external_spec
from v6bench.lab.model.spec import ROUTERS, LabSpec

SRC = Path(__file__).resolve().parents[2] / "src" / "v6bench"


def test_every_kind_of_lab_has_one_backend():
    assert set(backends.REGISTRY) == {*ROUTERS, "external"}
    assert len({id(b) for b in backends.REGISTRY.values()}) == len(backends.REGISTRY)
    for b in backends.REGISTRY.values():
        assert all(callable(getattr(b, m)) for m in ("check_test", "dut_config", "tunnel", "tunnel_record", "up", "take", "observer", "reset",
                                                   "describe", "dut_record", "record"))


def test_a_spec_asks_for_its_kind():
    assert backends.for_spec(LabSpec()) is backends.REGISTRY["ns"]
    assert backends.for_spec(LabSpec(router_kind="vm")) is backends.REGISTRY["vm"]
    ext = LabSpec(external=external_spec.load(EXAMPLE))
    assert ext.kind == "external" and backends.for_spec(ext) is backends.REGISTRY["external"]


def test_nothing_above_the_lab_tells_the_kinds_apart():
    # The layers above lab/ read a lab through lab/interface.py; a kind test there would be an `if` the next kind
    # of lab has to add again.
    kind_test = re.compile(r"isinstance\([^)]*ExternalLab|\.router(_kind)?\s*[!=]=|\.external is (not )?None")
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
    assert ns.routers.kind == "ns" and vm.routers.kind == "vm"
    assert ns.tunnel("6in4").mechanism != vm.tunnel("6in4").mechanism
    assert ns.tunnel_stand_in and not vm.tunnel_stand_in


def test_the_lab_folders_import_downward():
    # docs/architecture.md: the model runs nothing and imports no other folder; the emulated lab builds on the
    # model; VM routers and external labs build on both (a VM router's agent is read as an external router's).
    may = {"model": set(), "emulated": {"model"}, "external": {"model", "emulated"}, "vm": {"model", "emulated", "external"}}
    found = {}
    for folder in may:
        for p in sorted((SRC / "lab" / folder).glob("*.py")):
            for other in re.findall(r"^\s*from \.\.(model|emulated|vm|external)\b", p.read_text(), re.M):
                if other not in may[folder]:
                    found.setdefault(f"lab/{folder}/{p.name}", set()).add(other)
    assert found == {}, found
