"""The engine spec (``docs/engine-spec.md``, version 1) for a trial on a lab.

Ports are the two testers, named after their nodes (``t1``, ``t2``); streams
are named ``ipv4-t1-t2`` and so on. The engine sends from t1 to t2, and from
t2 to t1 as well when bidirectional, each direction at the requested rate;
through a DUT that keeps state, t2's streams answer t1's connections
(:mod:`.answers`).
Senders and the receiver are pinned per the lab's CPU plan. Frames larger
than the path carries whole are fragmented at the source (IPv4 to the
sender's link, IPv6 to the path MTU).
"""

from __future__ import annotations

from typing import Any

import functools
import json
import random
from dataclasses import replace
from pathlib import Path

from ..core.errors import UsageError
from ..engine.spec import Port, Stream, TrialSpec, Walk
from ..lab import interface
from ..lab.protocol import Lab
from ..lab.model import translation
from ..lab.model.tunnel import Tunnel
from . import addresses, answers, mesh, packet_io, preliminary, settle
from ..core import ext_headers, frames
from .path import LabPath
from .request import TrialRequest


def directions(request: TrialRequest) -> list[tuple[str, str]]:
    return [("t1", "t2"), ("t2", "t1")] if request.bidirectional else [("t1", "t2")]


def flows(lab: Lab, request: TrialRequest) -> tuple[list[str], list[tuple[str, str]]]:
    """The tester ports of the trial and its (sender, receiver) pairs: t1
    and t2, one way or both; or a ``mesh:N`` lab's ports in the pattern's
    round-robin order (:mod:`v6bench.trial.mesh`)."""
    if request.mesh:
        return mesh.testers(lab.topology), mesh.flows(lab.topology, request.mesh)
    return ["t1", "t2"], directions(request)


def engine_spec(lab: Lab, request: TrialRequest, fps: float) -> TrialSpec:
    """The spec; ``fps`` is the rate per direction (per sending port), validated on the lab
    (:meth:`~v6bench.trial.request.TrialRequest.check_on_lab`). One builder for
    point-to-point and mesh traffic: a stream per flow and family (each family in
    ``request.flows`` identical streams), fragmented
    at the source where its path does not carry the frames whole
    (``fragment_mtu``, :mod:`v6bench.trial.path`; mesh frames are always whole,
    :func:`v6bench.trial.fit.check_mesh`)."""
    testers, pairs = flows(lab, request)
    senders = list(dict.fromkeys(src for src, _ in pairs))
    plan = lab.cpu_plan
    ports = tuple(_port(lab, t, fps, plan.sender_cpus(senders.index(t), len(senders)) if t in senders else None)
                  for t in testers)
    if request.runs_s is not None:  # a share unit's run lasts runs_s (lab/machine/cost.runs reads them back)
        ports = tuple(replace(p, tx_run_frames=max(1, round(request.runs_s * fps))) if p.sends else p for p in ports)
    tunnel = interface.tunnel(lab)
    walks = table_walks(lab)
    if request.addresses > 1 and not interface.routes_address_ranges(lab):
        raise UsageError("many addresses need the router's routes toward their ranges, which only a lab v6bench "
                         "built holds (an external router routes what its own configuration does)", "addresses")
    if (walks or request.addresses > 1) and request.ext_headers and ext_headers.has_routing_header(request.ext_headers):
        raise UsageError(f"the {request.ext_headers} preset's routing header names the final destination: not "
                         "with a table's destinations or many addresses", "ext_headers")
    if request.bidirectional and lab.dut_config.answers_only and not preliminary.needed(lab, request):
        raise UsageError(f"through {'464XLAT' if lab.dut_config.xlat else 'DS-Lite'} t2's IPv4 reaches t1 only by "
                         "answering t1's connections: RFC 4814 ports "
                         "(not --ports fixed) and UDP frames, when bidirectional", "bidirectional")
    if request.bidirectional and not request.mesh and preliminary.needed(lab, request):
        forward = _pair_streams(lab, request, "t1", "t2", tunnel, walks)
        streams = forward + answers.replies(forward)  # t2 answers t1's connections (trial/answers.py)
    else:
        streams = [s for src, dst in pairs for s in _pair_streams(lab, request, src, dst, tunnel, walks)]
    return TrialSpec(ports, tuple(streams), duration_s=request.duration_s, drain_s=request.drain_s,
                     drain_until_received=True,  # nothing is late once every frame arrived (engine-spec.md)
                     learning_settle_s=settle.of(request.settle_s), rx_cpu=plan.tester_rx,
                     rx_priority=plan.tester_rx_priority, tester_limited_backlog_frames=input_queue_frames(lab),
                     after_stall=AFTER_STALL, netns_prefix=lab.netns_prefix,
                     allow_root_netns=lab.allow_root_netns,
                     allow_non_benchmarking_addresses=lab.allow_other_addresses,
                     # per-frame delay distributions for the report (seed 003 Fig. 3-4); mesh reports loss per flow
                     export_histograms=not request.mesh)


def _pair_streams(lab: Lab, request: TrialRequest, src: str, dst: str, tunnel: Tunnel | None,
                  walks: dict[int, Walk]) -> list[Stream]:
    """The streams from tester ``src`` to ``dst``: a stream per flow and
    family, each fragmented at the source where its path does not carry
    the frames whole; ``walks``: a table's destinations, walked from t1 to t2."""
    port_mode = frames.ports_used(request.ports)
    streams = []
    path = LabPath.build(lab.topology, lab.link_speed_bps, lab.mtu, tunnel, src, dst)
    first = []
    for version, share in request.mix.versions:
        stream = Stream(f"ipv{version}-{src}-{dst}", src, dst, version, request.frame_size, share,
                        fragment_mtu=path.source_mtu(version, request.frame_size))
        if request.icmp_echo:
            stream = _icmp_echo(lab, request.icmp_echo, stream)
        elif (src, dst) == ("t1", "t2") and version in walks:
            stream = replace(stream, walk=walks[version])
        elif request.addresses > 1:  # many flows for receive-side scaling (trial/addresses.py)
            stream = replace(stream, walk=addresses.walk(version, request.addresses, src, request.order_seed))
        first.append(stream)
    # Further flows: the same frames from their own UDP source port (core/frames.FLOW_SRC_PORT: what a
    # DUT scenario scoped to flow 2 matches; unscoped, an A/A control), listed flow by flow so that the
    # engine's round robin (engine/src/mix.rs) alternates the families as it does with one flow each:
    # IPv4 1, IPv6 1, IPv4 2, IPv6 2. A frame's delay depends on the frame before it where they overlap
    # in flight; grouped (IPv4 1, IPv4 2, IPv6 1, IPv6 2) the flows of a family would follow different
    # frames, and an A/A control would differ (measured: 60 kframes/s, 128 B). Which family and which
    # flow come first is drawn per trial (``order_seed``): at low rates a frame's delay depends on its
    # place in the round robin (at 500 frames/s the first of two streams 8.5 µs, the second 34 µs, on
    # this machine; bench/log/performance-2026-11.md), so a fixed order would be a family's or a flow's "effect".
    # A flow's share is its family's times the flow's weight: flow 2 n of every m frames with
    # ``foreground = "n/m"`` (core/frames.flow_weights; RFC 8219's foreground, flow 1 the background).
    families, flow_order = _order(first, request.flows, request.order_seed)
    chain = tuple(_ext_headers(lab, request.ext_headers, src, dst)) \
        if request.ext_headers and not request.icmp_echo and request.mix.ipv6_pct else None
    weights = frames.flow_weights(request.foreground) if request.flows == 2 else (1,)
    for k in flow_order:
        for s in families:
            s = replace(s, name=frames.flow_name(s.name, k), src_port=frames.FLOW_SRC_PORT[k] if k > 1 else None,
                        share=s.share * weights[k - 1])
            s = _translated(lab, s, k, request)
            if port_mode == "rfc4814" and s.protocol is None:
                s = _rfc4814(s, _port_ranges(lab, request, k), request.order_seed)
            headers = request.ext_headers and s.ip_version == 6 and not request.icmp_echo and \
                (request.ext_headers_scope == "all" or k == 2)
            streams.append(replace(s, ipv6_ext_headers=chain) if headers else s)
    return streams


def _port_ranges(lab: Lab, request: TrialRequest, flow: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """The source and destination ports flow ``flow``'s streams walk with
    RFC 4814's ports: its share of the source ports (core/frames.src_ports;
    flow 2's are what a scoped DUT matches) and destination ports 1-49151;
    through a DUT that keeps state only the first S and D of them, whose
    S·D connections RFC 9693's preliminary phase opens before the trial
    (core/frames.connection_ports, trial/preliminary.py)."""
    lo, hi = frames.src_ports(flow, request.flows)
    dst = frames.RFC4814_DST
    if not lab.keeps_state:
        return (lo, hi), dst
    n_src, n_dst = frames.connection_ports(request.preliminary_connections, hi - lo + 1)
    return (lo, lo + n_src - 1), (dst[0], dst[0] + n_dst - 1)


def ports_record(lab: Lab, request: TrialRequest) -> dict[str, Any]:
    """What a trial's UDP ports were, stored with it (``ports``): the mode
    asked and the one sent (core/frames.ports_used), and with RFC 4814 ports
    each flow's source range, the destination range and the permutation's
    seed (the trial's ``order_seed``); on a lab whose routers hold a table,
    t1's streams walk their ports in the table's permutation (``table_seed``);
    through a DUT that keeps state, the connections each stream walks
    (``connections_per_stream``, all opened by the preliminary phase)."""
    used = frames.ports_used(request.ports)
    out: dict[str, Any] = {"asked": request.ports, "used": "none (ICMP echo)" if request.icmp_echo else used}
    if used == "rfc4814" and not request.icmp_echo:
        ranges = {k: _port_ranges(lab, request, k) for k in range(1, request.flows + 1)}
        out.update(src={str(k): list(src) for k, (src, _) in ranges.items()}, dst=list(ranges[1][1]),
                   seed=request.order_seed if request.order_seed is not None else 1,
                   **({"table_seed": lab.fib["seed"]} if lab.fib else {}))
        if lab.keeps_state:
            out["connections_per_stream"] = {str(k): (src[1] - src[0] + 1) * (dst[1] - dst[0] + 1)
                                             for k, (src, dst) in ranges.items()}
    return out


def _rfc4814(stream: Stream, ranges: tuple[tuple[int, int], tuple[int, int]], seed: int | None) -> Stream:
    """``stream`` with RFC 4814 §4.5's pseudorandom UDP ports: the source
    and destination ``ranges`` (:func:`_port_ranges`), each walked by the
    engine in a seeded permutation, every value once a cycle; beside a
    table's walk of destinations, in that walk's permutation."""
    (s_lo, s_hi), (d_lo, d_hi) = ranges
    src_port, dst_port = (f"{s_lo}-{s_hi}",), (f"{d_lo}-{d_hi}",)
    if stream.walk is not None:
        return replace(stream, src_port=None, walk=replace(stream.walk, src_port=src_port, dst_port=dst_port))
    return replace(stream, src_port=None, walk=Walk(src_port=src_port, dst_port=dst_port, order="permuted",
                                                    seed=seed if seed is not None else 1))


def _translated(lab: Lab, stream: Stream, flow: int, request: TrialRequest) -> Stream:
    """``stream`` sent across the lab's NAT64 (``[dut] nat64``,
    lab/model/translation.py) where it meets it: IPv6 from t1 to t2's IPv4
    address in the NAT64 prefix, arriving as IPv4; in the stateless mode
    also IPv4 from t2 to t1's mapped address, arriving as IPv6. Scoped
    (``flow2``), only flow 2; the others, and every other stream, as given.
    The translator's prefix and mapped address are the lab's
    (``translator_addresses``: an external translator's lab file); IPv4
    toward t1 stays native where it maps no address to t1's."""
    dut = lab.dut_config
    if not dut.nat64 or (dut.scope == "flow2" and flow != 2):
        return stream
    forward = (stream.tx_port, stream.ip_version) == ("t1", 6)
    if not (forward or (dut.nat64 == "stateless" and (stream.tx_port, stream.ip_version) == ("t2", 4))):
        return stream
    for field in ("icmp_echo", "ext_headers"):
        if getattr(request, field):
            raise UsageError("a NAT64 lab translates UDP test frames: no ICMP echo or extension headers with it",
                             field)
    if stream.fragment_mtu is not None:
        raise UsageError(f"{stream.frame_size}-byte frames do not cross the path whole: a translated frame is "
                         "sent whole (the translator's fragments are not counted)", "frame_size")
    addresses = lab.translator_addresses
    if not forward and addresses.mapped_ipv4 is None:  # an external translator that maps no address to t1's
        return stream
    receiver = lab.node(stream.rx_port)["interfaces"][0]
    dst, rx_version = translation.destination(dut.nat64, stream.ip_version, receiver["ipv4"], addresses)
    grown = stream.frame_size + max(0, translation.size_change(stream.ip_version, rx_version))
    if grown - 18 > lab.mtu.of(stream.rx_port, "r1"):
        raise UsageError(f"{stream.frame_size}-byte IPv4 frames arrive as {grown}-byte IPv6 frames, more than "
                         f"t1's link takes (MTU {lab.mtu.of(stream.rx_port, 'r1')})", "frame_size")
    return replace(stream, dst_ip=dst, rx_ip_version=rx_version)


def table_walks(lab: Lab) -> dict[int, Walk]:
    """The destinations t1's frames walk on a lab whose routers hold a
    table (lab/emulated/fib_load.py), by IP version, in a permutation seeded by the
    table's seed; none without a table. Frames from t2 go to t1's address:
    the table's prefixes are routed toward t2."""
    fib = lab.fib
    if not fib:
        return {}
    path = Path(fib["destinations_file"])
    return dict(_walks(path, path.stat().st_mtime_ns, fib["seed"]))


@functools.lru_cache(maxsize=2)
def _walks(path: Path, mtime_ns: int, seed: int) -> dict[int, Walk]:
    """The walks of destinations file ``path`` as it was at ``mtime_ns``:
    read once for a campaign's many trials (up to 10^6 addresses a family)."""
    dests = json.loads(path.read_text())
    return {int(v): Walk(dst_ip=tuple(a), order="permuted", seed=seed) for v, a in dests.items()}


def _order(first: list[Stream], flows: int, seed: int | None) -> tuple[list[Stream], list[int]]:
    """The families' and the flows' order in the round robin: as listed
    without a seed, else each drawn from it (uniformly, independently)."""
    families, flow_order = list(first), list(range(1, flows + 1))
    if seed is not None:
        rng = random.Random(seed)
        rng.shuffle(families)
        rng.shuffle(flow_order)
    return families, flow_order


def _port(lab: Lab, tester: str, fps: float, cpus: tuple[int, ...] | None) -> Port:
    """Tester port ``tester``; it sends at ``fps`` from ``cpus`` (the CPU
    plan's, :meth:`CpuPlan.sender_cpus`: several give it as many senders,
    ``tx_queues``) if given."""
    node = lab.node(tester)
    (iface,) = node["interfaces"]
    port = Port(tester, iface["name"], node["netns"], iface["ipv4"], iface["ipv6"], iface["gateway_ipv4"],
                iface["gateway_ipv6"], packet_io.chosen())
    if cpus is None:
        return port
    if len(cpus) == 1:
        return replace(port, tx_fps=fps, tx_cpu=cpus[0])
    return replace(port, tx_fps=fps, tx_cpu=tuple(cpus), tx_queues=len(cpus))


#: What a sender does after a stall (the engine's ``after_stall``): on a
#: shared machine the host takes the tester's CPU for a few milliseconds
#: now and then, and a sender that then caught up would send the DUT a
#: burst above the intended rate, spoiling the trial whenever the burst
#: outgrew the DUT's input queue. ``slip`` moves the rest of the schedule
#: later instead: the DUT sees a pause, never more than the intended rate,
#: and a trial paused for more than 0.5 % of its time (the engine's
#: ``tester_limited_slip_ratio``) is still ``tester_limited``. Trials whose
#: schedule is the measurement (a burst, a rate step, a reset at a set
#: time) catch up instead (trial/lab_tester.py).
AFTER_STALL = "slip"

#: The frames a veth end with NAPI queues before it drops (VETH_RING_SIZE, drivers/net/veth.c).
VETH_RING_FRAMES = 256


def input_queue_frames(lab: Lab) -> int:
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


def _icmp_echo(lab: Lab, target: str, stream: Stream) -> Stream:
    """``stream`` (from t1) as ICMP echo to ``target`` (``dut``: t1's
    gateway, R1; ``far``: t2's port); its replies come back to t1."""
    (tx,) = lab.node("t1")["interfaces"]
    (far,) = lab.node("t2")["interfaces"]
    v = stream.ip_version
    dst = tx[f"gateway_ipv{v}"] if target == "dut" else far[f"ipv{v}"].split("/")[0]
    return replace(stream, protocol="icmp_echo", rx_port="t1", dst_ip=dst, name=f"icmp{v}-t1-{target}")


def _ext_headers(lab: Lab, preset: str, src: str, dst: str) -> list[dict[str, Any]]:
    """The preset for frames from tester ``src`` to ``dst``: the first router
    is the sender's gateway; on ``p2p`` there is none."""
    (tx,) = lab.node(src)["interfaces"]
    (rx,) = lab.node(dst)["interfaces"]
    sid = None if lab.topology == "p2p" else tx["gateway_ipv6"]
    return ext_headers.headers(preset, sid, rx["ipv6"].split("/")[0])
