"""What the lab itself measures around a trial: the DUT's CPU time and the
kernel counters of every router interface.

A router's forwarding work runs in the NAPI threads of its interfaces
(:mod:`v6bench.lab.napi`), so its CPU time over a trial is the sum of those
threads' run time (``/proc/PID/schedstat``, ns). Counters come from netlink
(``IFLA_STATS64``) in each router's namespace.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyroute2 import IPRoute

from . import napi
from .dut import acl_counters
from .state import LabState

COUNTERS = ("rx_packets", "tx_packets", "rx_dropped", "tx_dropped")


@dataclass(frozen=True)
class Snapshot:
    """CPU time per NAPI thread [ns] and counters per router interface."""

    cpu_ns: dict[int, int | None]
    counters: dict[str, dict[str, int]]  # "r1/r1-t2" → counters
    acl: dict[str, dict[str, dict[str, int]]]  # "r1" → dut.acl_counters()


def snapshot(lab: LabState) -> Snapshot:
    cpu = {t["pid"]: napi.cpu_time_ns(t["pid"]) for t in lab.napi}
    counters = {}
    for node in lab.nodes:
        if node["role"] != "dut":
            continue
        with IPRoute(netns=node["netns"]) as ipr:
            for link in ipr.get_links():
                name = link.get("ifname")
                if name == "lo":
                    continue
                stats = link.get("stats64") or {}
                counters[f"{node['name']}/{name}"] = {k: int(stats.get(k, 0)) for k in COUNTERS}
    acl = {}
    if lab.dut_config.acl:
        acl = {n["name"]: acl_counters(n["netns"]) for n in lab.nodes if n["role"] == "dut"}
    return Snapshot(cpu, counters, acl)


def difference(lab: LabState, before: Snapshot, after: Snapshot, traffic_s: float) -> dict:
    """The DUT's share of a trial.

    Returns ``{"routers": [{name, cpu, busy_ns, busy_ratio}], "tester_rx":
    {busy_ns, busy_ratio}, "interfaces": {"r1/r1-t2": {counter: delta}},
    "acl": {"r1": {"v4": {"permit": delta, "deny": delta}, "v6": …}}}``
    (``acl`` only with ACLs).
    ``busy_ratio`` is busy time over the traffic time: the share of one CPU
    the work took while traffic flowed (it also includes the little work of
    the learning and drain phases). None where a thread vanished, and in
    the ``inline`` arrangement, where the DUT's work is not separable.
    """

    def busy(threads: list[dict]) -> dict:
        if not threads:  # inline arrangement: the work ran in the tester's sender
            return {"busy_ns": None, "busy_ratio": None}
        total = 0
        for t in threads:
            b, a = before.cpu_ns.get(t["pid"]), after.cpu_ns.get(t["pid"])
            if a is None or b is None:
                return {"busy_ns": None, "busy_ratio": None}
            total += a - b
        return {"busy_ns": total, "busy_ratio": round(total / (traffic_s * 1e9), 4) if traffic_s > 0 else None}

    routers = []
    for node in lab.nodes:
        if node["role"] == "dut":
            threads = [t for t in lab.napi if t["node"] == node["name"]]
            routers.append({"name": node["name"], "cpu": sorted({t["cpu"] for t in threads}), **busy(threads)})
    tester_threads = [t for t in lab.napi if lab.node(t["node"])["role"] == "tester"]
    interfaces = {
        key: {k: after.counters[key][k] - before.counters[key].get(k, 0) for k in COUNTERS}
        for key in after.counters
        if key in before.counters
    }
    out = {"routers": routers, "tester_rx": busy(tester_threads), "interfaces": interfaces}
    if after.acl:
        out["acl"] = {router: {fam: {k: v - before.acl.get(router, {}).get(fam, {}).get(k, 0) for k, v in c.items()}
                               for fam, c in fams.items()} for router, fams in after.acl.items()}
    return out
