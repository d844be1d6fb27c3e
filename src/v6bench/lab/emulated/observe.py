"""What the lab itself measures around a trial: the DUT's CPU time, the
kernel counters of every router interface, and the routers' data plane's
own count of what it forwarded (lab/dataplanes/), set beside the engine's.

A router's forwarding work runs in the NAPI threads of its interfaces
(:mod:`v6bench.lab.machine.napi`), so its CPU time over a trial is the sum of those
threads' run time (``/proc/PID/schedstat``, ns), taken over the traffic
window alone (:mod:`.cpu_window`) and read a second, independent way from
the DUT CPUs' own busy time (``/proc/stat``). Counters come from netlink
(``IFLA_STATS64``) in each router's namespace.
"""

from __future__ import annotations

from typing import Any

from dataclasses import dataclass

from pyroute2 import IPRoute

from ..machine import cost, napi
from ..machine.cpu_window import Sampler
from ..dataplanes import registry as data_planes
from . import plane_host, rps, translator
from .configured import acl_counters
from ..model import translation, xlat
from ..model.topology import ROUTER, TESTER, parse_topology
from .state import LabState

COUNTERS = ("rx_packets", "tx_packets", "rx_dropped", "tx_dropped")
#: What a namespace router's forwarding work is read from (lab/machine/cost.py).
NAPI_BASIS = "the routers' NAPI threads' run time (schedstat) over the traffic window"


@dataclass(frozen=True)
class Snapshot:
    """CPU time per NAPI thread [ns] and counters per router interface."""

    cpu_ns: dict[int, int | None]
    counters: dict[str, dict[str, int]]  # "r1/r1-t2" → counters
    acl: dict[str, dict[str, dict[str, int]]]  # "r1" → configured.acl_counters()
    translator: dict[str, Any] | None = None  # each TAYGA's state (translator.state) by router, with translation
    rps: dict[str, dict[str, int]] | None = None  # frames forwarded on each CPU (rps.counts) by router, with RPS
    plane: dict[str, dict[str, int]] | None = None  # the data plane's counts (lab/dataplanes/protocol.COUNTS) by router


def snapshot(lab: LabState) -> Snapshot:
    cpu = {t["pid"]: napi.cpu_time_ns(t["pid"]) for t in lab.napi}
    counters = {}
    for node in lab.nodes:
        if node["role"] != ROUTER:
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
        acl = {n["name"]: acl_counters(n["netns"]) for n in lab.nodes if n["role"] == ROUTER}
    taygas = translator.taygas(parse_topology(lab.topology), lab.dut_config)
    held = {t.router: translator.state(lab.node(t.router)["netns"], t.stateful) for t in taygas} if taygas else None
    steered = {n["name"]: rps.counts(n["netns"]) for n in lab.nodes if n["role"] == ROUTER} if lab.dut_config.rps else None
    plane = plane_host.counts(data_planes.find(lab.data_plane), lab.nodes)
    return Snapshot(cpu, counters, acl, held, steered, plane)


def sampler(lab: LabState) -> Sampler:
    """The sampler of the routers' NAPI threads and the DUT's CPUs for one
    trial (run it around the engine), on the tester's receive CPU."""
    plan = lab.cpu_plan
    routers = {n["name"] for n in lab.nodes if n["role"] == ROUTER}
    pids = [t["pid"] for t in lab.napi if t["node"] in routers]
    return Sampler(pids, list(plan.dut_cpus) if plan.arrangement == "split" else [], plan.tester_rx)


def difference(lab: LabState, before: Snapshot, after: Snapshot, traffic_s: float, window: dict[str, Any] | None = None) -> dict[str, Any]:
    """The DUT's share of a trial.

    Returns ``{"routers": [{name, cpu, busy_ns, busy_ratio, window_s,
    run_busy_ns}], "dut_cpus": {cpu: busy_ratio}, "tester_rx": {busy_ns,
    busy_ratio}, "interfaces": {"r1/r1-t2": {counter: delta}}, "acl":
    {"r1": {"v4": {"permit": delta, "deny": delta}, "v6": …}},
    "forwarding": lab/machine/cost.forwarding}`` (``acl`` only with ACLs;
    ``forwarding``: the routers' NAPI threads' run time over the window,
    unrounded).

    ``busy_ratio`` is a router's NAPI threads' run time over the traffic
    window (``window``, from :func:`sampler`) divided by its length: the
    share of one CPU the forwarding took while traffic flowed. Without a
    window (too short to sample) it falls back to the whole engine run's
    run time over ``traffic_s`` (``run_busy_ns``, which also holds the
    little work of the learning and drain phases). ``dut_cpus``: each DUT
    CPU's own busy share over the same window (``/proc/stat``), the
    independent reading. None where a thread vanished, and in the
    ``inline`` arrangement, where the DUT's work is not separable.
    """

    routers = []
    for node in lab.nodes:
        if node["role"] == ROUTER:
            threads = [t for t in lab.napi if t["node"] == node["name"]]
            routers.append({"name": node["name"], "cpu": sorted({t["cpu"] for t in threads}),
                            **_busy(threads, before, after, traffic_s, window)})
    tester_threads = [t for t in lab.napi if lab.node(t["node"])["role"] == TESTER]
    cpus_ns: dict[int, float | None] = window["cpus"] if window else {}
    window_ns = window["window_ns"] if window else 0
    interfaces = {
        key: {k: after.counters[key][k] - before.counters[key].get(k, 0) for k in COUNTERS}
        for key in after.counters
        if key in before.counters
    }
    out = {"routers": routers, "tester_rx": _busy(tester_threads, before, after, traffic_s, window), "interfaces": interfaces,
           "dut_cpus": {str(c): None if ns is None else round(ns / window_ns, 4) for c, ns in cpus_ns.items()},
           "forwarding": cost.forwarding([_share(r, traffic_s) for r in routers], NAPI_BASIS, None,
                                         [ns / window_ns if ns is not None else None
                                          for ns in cpus_ns.values()] if window else None)}
    for t in translator.taygas(parse_topology(lab.topology), lab.dut_config):
        # R1's NAT64, or 464XLAT's PLAT ("translator", keeping state) and CLAT ("clat")
        out["clat" if t.tun == xlat.CLAT_DEV else "translator"] = translated(t, lab.dut_config.nat64 or "stateful",
                                                                             before, after)
    if after.rps is not None and before.rps is not None:  # frames each router forwarded on each CPU
        out["rps"] = {router: {cpu: n - before.rps.get(router, {}).get(cpu, 0) for cpu, n in by_cpu.items()}
                      for router, by_cpu in after.rps.items()}
    if after.acl:
        out["acl"] = {router: {fam: {k: v - before.acl.get(router, {}).get(fam, {}).get(k, 0) for k, v in c.items()}
                               for fam, c in fams.items()} for router, fams in after.acl.items()}
    return out



def _busy(threads: list[dict[str, Any]], before: Snapshot, after: Snapshot, traffic_s: float,
          window: dict[str, Any] | None) -> dict[str, Any]:
    """Threads' run time over a trial (:func:`difference`'s ``busy_ns``, ``busy_ratio``, ``window_s``)."""
    if not threads:  # inline arrangement: the work ran in the tester's sender
        return {"busy_ns": None, "busy_ratio": None}
    total = 0
    for t in threads:
        b, a = before.cpu_ns.get(t["pid"]), after.cpu_ns.get(t["pid"])
        if a is None or b is None:
            return {"busy_ns": None, "busy_ratio": None}
        total += a - b
    out = {"busy_ns": total, "busy_ratio": round(total / (traffic_s * 1e9), 4) if traffic_s > 0 else None,
           "run_busy_ns": total, "window_s": None}
    ns = [window["threads"].get(t["pid"]) for t in threads] if window else [None]
    known = [x for x in ns if x is not None]
    if window and len(known) == len(ns):
        out.update(busy_ns=round(sum(known)), busy_ratio=round(sum(known) / window["window_ns"], 4),
                   window_s=window["window_ns"] / 1e9)
    return out

def translated(t: translation.Tayga, mode: str, before: Snapshot, after: Snapshot) -> dict[str, Any]:
    """TAYGA ``t`` over one trial (the trial's ``dut.translator``, R1's
    NAT64 of ``mode`` or 464XLAT's PLAT; ``dut.clat``, its CLAT): the frames
    the kernel handed TAYGA (``into_frames``) and TAYGA handed back
    translated (``out_frames``), read from its tun device; whether TAYGA
    still ran; if it keeps state, the connection-tracking entries before
    and after and the connections the source NAT opened (``new_sessions``)."""
    dev = f"{t.router}/{t.tun}"
    b, a = before.counters.get(dev, {}), after.counters.get(dev, {})
    now = (after.translator or {}).get(t.router, {})
    out = {"mode": mode if t.tun != xlat.CLAT_DEV else "clat", "running": now.get("running"),
           "into_frames": a.get("tx_packets", 0) - b.get("tx_packets", 0),
           "out_frames": a.get("rx_packets", 0) - b.get("rx_packets", 0)}
    if t.stateful:
        bt = (before.translator or {}).get(t.router, {})
        out.update(sessions_before=bt.get("sessions"), sessions=now.get("sessions"),
                   new_sessions=None if now.get("nat_matches") is None or bt.get("nat_matches") is None
                   else now["nat_matches"] - bt["nat_matches"])
    return out


def _share(router: dict[str, Any], traffic_s: float) -> float | None:
    """A router's forwarding work in CPUs (lab/machine/cost.py), unrounded: its
    threads' run time over the window, else over the engine's traffic."""
    if router["busy_ns"] is None:
        return None
    busy_ns: float = router["busy_ns"]
    window_s: float | None = router.get("window_s")
    if window_s:
        return busy_ns / (window_s * 1e9)
    return busy_ns / (traffic_s * 1e9) if traffic_s > 0 else None


class LabObserver:
    """The emulated lab's observations around one trial
    (:class:`~v6bench.lab.protocol.Observer`): a snapshot before, the
    sampler while the engine runs, a snapshot after and their difference."""

    def __init__(self, lab: LabState) -> None:
        self.lab = lab

    def before(self) -> Snapshot:
        return snapshot(self.lab)

    def during(self, limit_s: float, traffic_s: float | None = None) -> Sampler:
        return sampler(self.lab)

    def after(self, before: Snapshot, during: Sampler, eng: dict[str, Any]) -> dict[str, Any]:
        start_ns = eng["started_at_unix_ns"]
        end_ns = start_ns + round(eng["traffic_s"] * 1e9)
        now = snapshot(self.lab)
        out = difference(self.lab, before, now, eng["traffic_s"], during.window(start_ns, end_ns))
        out["forwarding"] = cost.with_runs(out["forwarding"], eng, during)
        if now.plane is not None and before.plane is not None:
            out["data_plane"] = plane_host.over_trial(self.lab.data_plane, before.plane, now.plane, eng)
        return out

    def reasons(self, eng: dict[str, Any], observed: dict[str, Any], reset_router: str | None) -> list[str]:
        """Frames the tester lost in this lab, not the DUT: a router's veth
        dropping toward a tester port (the tester's receive queue overflowed;
        not on a router being reset, whose links went down), and drops on the
        p2p link between the tester's own ports."""
        reasons: list[str] = []
        testers = {n["name"] for n in self.lab.nodes if n["role"] == TESTER}
        peers = {f"{n['name']}/{i['name']}": i["peer"].split("/")[0] for n in self.lab.nodes for i in n["interfaces"]}
        for key, c in observed["interfaces"].items():
            peer = peers.get(key)
            if peer in testers and c["tx_dropped"] > 0 and key.split("/")[0] != reset_router:
                reasons.append(f"{c['tx_dropped']} frames dropped by {key} on their way into tester port {peer}: "
                               "the tester's receive queue overflowed")
        if self.lab.topology == "p2p":
            for port in eng["ports"]:
                dropped = port["interface_counters"]["tx_dropped"]
                if dropped > 0:
                    reasons.append(f"{dropped} frames dropped on p2p link at {port['interface']}: the receiving "
                                   "tester did not keep up")
        return reasons
