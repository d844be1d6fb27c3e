"""Receive packet steering (RPS) on namespace routers (``[dut] rps``):
each receive queue of a router's interfaces hands a frame, by the hash of
its flow (addresses, and ports for UDP), to one CPU of a set, where the
router then forwards it (the kernel's Documentation/networking/scaling.rst).
One flow stays on one CPU; many spread over the set, as RSS spreads them
over a NIC's queues. The work is counted on each CPU by an nftables rule
in the router's forward hook (``meta cpu``), read with every trial
(``dut.rps``), so a trial shows where its frames were forwarded.

``rps = "dut"`` steers over the CPU plan's DUT CPUs (lab/model/cpus.py),
which needs two or more (4 CPUs give the DUT two); ``"all"`` over every
CPU v6bench may use, the tester's included (said in the DUT's
description): on a 2-CPU machine the only way to see the spread.
"""

from __future__ import annotations

import json

from ...core.errors import LabError, UsageError
from ..machine import nsctl
from ..model.cpus import CpuPlan
from ..model.dut import DutConfig
from ..model.site import Site
from ..model.topology import Topology

TABLE = "v6bench_rps"


def cpus(dut: DutConfig, plan: CpuPlan) -> tuple[int, ...]:
    """The CPUs ``dut``'s RPS steers over on ``plan`` (none without RPS)."""
    return {"": (), "dut": plan.dut_cpus, "all": plan.available}[dut.rps]


def check(dut: DutConfig, plan: CpuPlan) -> None:
    """Refuses a steering that cannot spread anything: fewer than two CPUs."""
    if dut.rps and len(cpus(dut, plan)) < 2:
        raise UsageError(f"RPS over {'the DUT' if dut.rps == 'dut' else 'every'} CPU{'s' if dut.rps == 'all' else ''} "
                         f"needs two or more; this plan has {', '.join(map(str, cpus(dut, plan)))} (4 CPUs give the "
                         "DUT two; rps = \"all\" steers over the tester's too)", "rps")


def mask(cpu_list: tuple[int, ...]) -> str:
    """The hexadecimal CPU mask of ``rps_cpus`` (CPUs 0 and 1: ``3``)."""
    return format(sum(1 << c for c in cpu_list), "x")


def ruleset(cpu_list: tuple[int, ...]) -> str:
    """A counter for each CPU in the forward hook (before any DUT rule, so every forwarded frame is counted)."""
    rules = "".join(f"    meta cpu {c} counter\n" for c in cpu_list)
    return (f"table inet {TABLE} {{\n  chain forward {{\n    type filter hook forward priority filter - 10; "
            f"policy accept;\n{rules}  }}\n}}\n")


def apply(site: Site, topo: Topology, dut: DutConfig, plan: CpuPlan, only: str | None = None) -> None:
    """Steers every receive queue of each router's interfaces over :func:`cpus` and loads the counters;
    ``only``: that router alone (after a hard reset)."""
    if not dut.rps:
        return
    cpu_list = cpus(dut, plan)
    for node in topo.routers:
        if only not in (None, node.name):
            continue
        ns = site.netns(node.name)
        for i in node.interfaces:
            nsctl.command(ns, ["sh", "-c", f"for q in /sys/class/net/{i.name}/queues/rx-*; do "
                                           f"echo {mask(cpu_list)} > $q/rps_cpus; done"])
        nsctl.command(ns, ["nft", "-f", "-"], f"table inet {TABLE}\ndelete table inet {TABLE}\n" + ruleset(cpu_list))


def counts(netns: str) -> dict[str, int]:
    """Frames forwarded so far on each CPU, by CPU number as text."""
    try:
        doc = json.loads(nsctl.command(netns, ["nft", "-j", "list", "table", "inet", TABLE]))
    except LabError:  # no table: a router without RPS
        return {}
    out = {}
    for item in doc.get("nftables", []):
        exprs = (item.get("rule") or {}).get("expr", [])
        cpu = next((e["match"]["right"] for e in exprs if "match" in e and e["match"]["left"] == {"meta": {"key": "cpu"}}),
                   None)
        packets = next((e["counter"]["packets"] for e in exprs if "counter" in e), None)
        if cpu is not None and packets is not None:
            out[str(cpu)] = packets
    return out
