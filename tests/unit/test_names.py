"""One meaning per name in code (docs/architecture.md, "Names"): "dut" is
the DUT configuration, a router's role is ``topology.ROUTER``, the way a
lab's routers are made is ``router_kind``; stored formats keep their
names through one mapping each, tested here."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from test_trial_spec import lab_of

from v6bench.lab.emulated.state import LabState
from v6bench.lab.model.dut import DutConfig
from v6bench.lab.model.spec import lab_spec
from v6bench.lab.model.topology import ROUTER, TESTER, parse_topology

SRC = Path(__file__).resolve().parents[2] / "src" / "v6bench"


def test_a_routers_role_is_named_once():
    literal = re.compile(r"""role["'\])]*\s*[!=]=\s*["']dut["']|["']dut["']\s*[!=]=\s*\S*role""")
    found = [f"{p.relative_to(SRC)}:{n}" for p in sorted(SRC.rglob("*.py"))
             for n, line in enumerate(p.read_text().splitlines(), 1) if literal.search(line)]
    assert found == [], found
    topo = parse_topology("b")
    assert [n.name for n in topo.nodes if n.role == ROUTER] == ["r1", "r2"]
    assert {n.role for n in topo.nodes} == {ROUTER, TESTER}


def test_the_lab_state_keeps_its_stored_names():
    lab = dataclasses.replace(lab_of("a"), dut_config=DutConfig(acl=25), router_kind="vm")
    stored = lab.to_json()
    assert stored["dut"] == DutConfig(acl=25).to_json() and stored["dut"]["acl"] == 25
    assert stored["router"] == "vm" and "router_kind" not in stored and "dut_config" not in stored
    back = LabState.from_json(stored)
    assert back.dut_config == DutConfig(acl=25) and back.router_kind == "vm" and back.lab_kind == "vm"


def test_the_lab_table_key_router_is_the_router_kind():
    assert lab_spec({"router": "vm", "topology": "b"}).lab_kind == "vm"
