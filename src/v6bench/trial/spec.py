"""The engine spec (``docs/engine-spec.md``, version 1) for a trial on a lab.

Ports are the two testers, named after their nodes (``t1``, ``t2``); streams
are named ``ipv4-t1-t2`` and so on. The engine sends from t1 to t2, and from
t2 to t1 as well when bidirectional, each direction at the requested rate.
Senders and the receiver are pinned per the lab's CPU plan. Frames larger
than the path carries whole are fragmented at the source (IPv4 to the
sender's link, IPv6 to the path MTU).
"""

from __future__ import annotations

from pathlib import Path

from ..engine import SPEC_VERSION
from ..lab.state import LabState
from . import backend, mesh
from ..core import ext_headers
from .path import LabPath
from .request import TrialRequest


def directions(request: TrialRequest) -> list[tuple[str, str]]:
    return [("t1", "t2"), ("t2", "t1")] if request.bidirectional else [("t1", "t2")]


def engine_spec(lab: LabState, request: TrialRequest, fps: float, path: LabPath | None = None) -> dict:
    """The spec; ``fps`` is the rate per direction, validated on the lab
    (:meth:`~v6bench.trial.request.TrialRequest.check_on_lab`). A stream
    whose frames the path does not carry whole is fragmented at the source
    (``fragment_mtu``, :mod:`v6bench.trial.path`)."""
    if request.mesh:
        return _mesh_spec(lab, request, fps)
    path = path or LabPath.of(lab)
    plan = lab.cpu_plan
    senders = [src for src, _ in directions(request)]
    ports = []
    for tester in ("t1", "t2"):
        port = _port(lab, tester)
        if tester in senders:
            port["tx_rate"] = {"fps": fps}
            port.update(_sender_cpus(plan, senders.index(tester), len(senders)))
        ports.append(port)
    streams = [
        {"name": f"ipv{version}-{src}-{dst}", "tx_port": src, "rx_port": dst, "ip_version": version,
         "frame_size": request.frame_size, "share": share}
        for src, dst in directions(request)
        for version, share in request.mix.versions
    ]
    for s in streams:
        mtu = path.source_mtu(s["ip_version"], request.frame_size, reverse=s["tx_port"] == "t2")
        if mtu is not None:
            s["fragment_mtu"] = mtu
    if request.icmp_echo:
        _icmp_echo(lab, request.icmp_echo, streams)
    if request.ext_headers:
        for s in streams:
            if s["ip_version"] == 6:
                s["ipv6_ext_headers"] = _ext_headers(lab, request.ext_headers, s["tx_port"], s["rx_port"])
    return {
        "spec_version": SPEC_VERSION,
        "duration_s": request.duration_s,
        "drain_s": request.drain_s,
        "rx_cpu": plan.tester_rx,
        **_rx_priority(plan),
        "tester_limited_backlog_frames": input_queue_frames(lab),
        "after_stall": AFTER_STALL,
        "export_histograms": True,  # per-frame delay distributions for the report (seed 003 Fig. 3-4)
        "ports": ports,
        "streams": streams,
    }


def _rx_priority(plan) -> dict:
    """The engine's ``rx_priority``, where the CPU plan gives one
    (:attr:`CpuPlan.tester_rx_priority`)."""
    p = plan.tester_rx_priority
    return {} if p is None else {"rx_priority": p}


def _sender_cpus(plan, index: int, senders: int) -> dict:
    """The engine's ``tx_cpu`` (and ``tx_queues``, with several) for the
    ``index``-th of ``senders`` sending ports (:meth:`CpuPlan.sender_cpus`)."""
    cpus = plan.sender_cpus(index, senders)
    return {"tx_cpu": cpus[0]} if len(cpus) == 1 else {"tx_cpu": list(cpus), "tx_queues": len(cpus)}


def _port(lab: LabState, tester: str) -> dict:
    node = lab.node(tester)
    (iface,) = node["interfaces"]
    return {"name": tester, "interface": iface["name"], "netns": node["netns"], "ipv4": iface["ipv4"],
            "ipv6": iface["ipv6"], "gateway_ipv4": iface["gateway_ipv4"], "gateway_ipv6": iface["gateway_ipv6"],
            "backend": backend.chosen()}


def _mesh_spec(lab: LabState, request: TrialRequest, fps: float) -> dict:
    """Every tester port; each sender at ``fps`` to its destinations in
    round-robin order (:mod:`v6bench.trial.mesh`). Frames are sent whole
    (:func:`v6bench.trial.traffic.check_mesh`)."""
    flows = mesh.flows(lab.topology, request.mesh)
    plan = lab.cpu_plan
    senders = mesh.senders(lab.topology, request.mesh)
    ports = []
    for tester in mesh.testers(lab.topology):
        port = _port(lab, tester)
        if tester in senders:
            port["tx_rate"] = {"fps": fps}
            port.update(_sender_cpus(plan, senders.index(tester), len(senders)))
        ports.append(port)
    streams = [{"name": f"ipv{v}-{src}-{dst}", "tx_port": src, "rx_port": dst, "ip_version": v,
                "frame_size": request.frame_size, "share": share}
               for src, dst in flows for v, share in request.mix.versions]
    return {"spec_version": SPEC_VERSION, "duration_s": request.duration_s, "drain_s": request.drain_s,
            "rx_cpu": plan.tester_rx, **_rx_priority(plan), "tester_limited_backlog_frames": input_queue_frames(lab),
            "after_stall": AFTER_STALL, "ports": ports,
            "streams": streams}


#: What a sender does after a stall (the engine's ``after_stall``): on a
#: shared machine the host takes the tester's CPU for a few milliseconds
#: now and then, and a sender that then caught up would send the DUT a
#: burst above the intended rate, spoiling the trial whenever the burst
#: outgrew the DUT's input queue. ``slip`` moves the rest of the schedule
#: later instead: the DUT sees a pause, never more than the intended rate,
#: and a trial paused for more than 0.5 % of its time (the engine's
#: ``tester_limited_slip_ratio``) is still ``tester_limited``. Trials whose
#: schedule is the measurement (a burst, a rate step, a reset at a set
#: time) catch up instead (trial/tester.py).
AFTER_STALL = "slip"

#: The frames a veth end with NAPI queues before it drops (VETH_RING_SIZE, drivers/net/veth.c).
VETH_RING_FRAMES = 256


def input_queue_frames(lab: LabState) -> int:
    """How many frames the DUT's input takes back to back before it drops:
    a catch-up burst longer than this would be lost at the DUT because of
    the tester, so the engine marks such a trial ``tester_limited``. With
    threaded NAPI on the veth ends (``split``), the veth ring; inline, the
    CPU's input backlog (``net.core.netdev_max_backlog``)."""
    if lab.cpu_plan.arrangement == "split":
        return VETH_RING_FRAMES
    try:
        return int(Path("/proc/sys/net/core/netdev_max_backlog").read_text())
    except (OSError, ValueError):
        return 1000


def _icmp_echo(lab: LabState, target: str, streams: list[dict]) -> None:
    """Turns t1's streams into ICMP echo streams to ``target`` (``dut``: t1's
    gateway, R1; ``far``: t2's port); their replies come back to t1."""
    (tx,) = lab.node("t1")["interfaces"]
    (far,) = lab.node("t2")["interfaces"]
    for s in streams:
        v = s["ip_version"]
        if target == "dut":
            dst = tx[f"gateway_ipv{v}"]
        else:
            dst = far[f"ipv{v}"].split("/")[0]
        s.update(protocol="icmp_echo", rx_port="t1", dst_ip=dst, name=f"icmp{v}-t1-{target}")


def _ext_headers(lab: LabState, preset: str, src: str, dst: str) -> list[dict]:
    """The preset for frames from tester ``src`` to ``dst``: the first router
    is the sender's gateway; on ``p2p`` there is none."""
    (tx,) = lab.node(src)["interfaces"]
    (rx,) = lab.node(dst)["interfaces"]
    sid = None if lab.topology == "p2p" else tx["gateway_ipv6"]
    return ext_headers.headers(preset, sid, rx["ipv6"].split("/")[0])
