"""Receive packet steering (lab/emulated/rps.py): the CPUs of each mode on
a CPU plan, the mask the kernel reads, the per-CPU counting rules, the
counters read back from nft's JSON, and what is refused: a set of one CPU
(nothing to spread over), VM routers, an unknown mode."""

import json

import pytest

from v6bench.core.errors import UsageError
from v6bench.lab.emulated import rps
from v6bench.lab.emulated.backend import NamespaceBackend
from v6bench.lab.model.cpus import plan
from v6bench.lab.model.dut import DutConfig
from v6bench.lab.model.spec import LabSpec
from v6bench.lab.vm.backend import VmBackend


def test_the_modes_steer_over_the_duts_cpus_or_every_cpu_and_one_cpu_is_refused():
    two, four = plan("split", (0, 1)), plan("split", (0, 1, 2, 3))
    assert rps.cpus(DutConfig(rps="dut"), four) == (2, 3) and rps.cpus(DutConfig(rps="all"), two) == (0, 1)
    assert rps.cpus(DutConfig(), two) == ()
    rps.check(DutConfig(rps="dut"), four)
    rps.check(DutConfig(rps="all"), two)
    with pytest.raises(UsageError, match="needs two or more; this plan has 1") as e:
        rps.check(DutConfig(rps="dut"), two)
    assert e.value.field == ("rps",)
    with pytest.raises(UsageError, match="is not one of dut, all") as e:
        DutConfig(rps="some")
    assert e.value.field == ("rps",)
    assert "receive packet steering over every CPU, the tester's included" in DutConfig(rps="all").describe()
    assert "rps" not in DutConfig().to_json() and DutConfig.from_json(DutConfig(rps="all").to_json()).rps == "all"


def test_the_mask_and_the_counting_rules():
    assert rps.mask((0, 1)) == "3" and rps.mask((2, 3)) == "c" and rps.mask((0, 9)) == "201"
    text = rps.ruleset((2, 3))
    assert f"table inet {rps.TABLE} " in text and "hook forward priority filter - 10" in text
    assert "    meta cpu 2 counter\n    meta cpu 3 counter\n" in text


def test_the_counters_are_read_from_nfts_json(monkeypatch):
    def rule(cpu, packets):
        return {"rule": {"family": "inet", "table": rps.TABLE, "chain": "forward", "expr": [
            {"match": {"op": "==", "left": {"meta": {"key": "cpu"}}, "right": cpu}},
            {"counter": {"packets": packets, "bytes": packets * 128}}]}}
    doc = {"nftables": [{"metainfo": {}}, {"table": {"name": rps.TABLE}}, rule(0, 5), rule(1, 10_000)]}
    monkeypatch.setattr(rps.nsctl, "command", lambda ns, argv: json.dumps(doc))
    assert rps.counts("ns") == {"0": 5, "1": 10_000}


def test_namespace_routers_steer_and_vm_routers_refuse():
    spec = LabSpec(topology="a", cpu_arrangement="split")
    if len(__import__("os").sched_getaffinity(0)) >= 2:
        assert NamespaceBackend().dut_config({"rps": "all"}, spec).rps == "all"
    with pytest.raises(UsageError, match="one vCPU") as e:
        VmBackend().dut_config({"rps": "all"}, LabSpec(topology="a", lab_kind="vm"))
    assert e.value.field == ("rps",)
