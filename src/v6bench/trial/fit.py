"""Whether a trial's frames fit a lab: what they need of its topology
(a router, a mesh) and of its path from t1 to t2 (MTUs, a tunnel).

The rules :mod:`v6bench.core.frames` cannot check without a lab, shared by
``v6bench trial`` (before it builds a lab, and on the lab it runs on) and
campaign files (against each scenario's lab). Errors name the field as a
trial does.
"""

from __future__ import annotations

from ..core.errors import UsageError
from ..core import frames
from ..core.frames import Mix, Traffic
from ..lab.model import tunnel
from ..lab.model.dut import DutConfig
from ..lab.model.mtu import Mtus
from . import mesh as mesh_traffic
from .path import LabPath


def check_on_topology(traffic: Traffic, topology: str, mesh: bool = False) -> None:
    """What the traffic needs of the lab's topology: a router to answer
    echo to the DUT or to process an SRH, a ``mesh:N`` lab for mesh traffic."""
    if mesh:
        mesh_traffic.testers(topology)
    if traffic.icmp_echo == "dut" and topology == "p2p":
        raise UsageError("dut: topology p2p has no router; use far, or topology a or b", "icmp_echo")
    if traffic.ext_headers == "srh" and topology == "p2p":
        raise UsageError("srh: needs a router to process it (topology a, b or chain:N, not p2p)", "ext_headers")


def check_on_dut(traffic: Traffic, dut: DutConfig) -> None:
    """A DUT whose scenario is scoped to the second flow (lab/model/dut.py
    ``scope``) meets it only in trials that send two flows a family; through
    a DUT that keeps state each stream's RFC 4814 ports must hold its
    preliminary phase's connections (core/frames.connection_ports)."""
    if dut.keeps_state and frames.ports_used(traffic.ports) == "rfc4814":
        for flow in range(1, traffic.flows + 1):
            lo, hi = frames.src_ports(flow, traffic.flows)
            frames.connection_ports(traffic.preliminary_connections, hi - lo + 1)
    if dut.scope == "flow2" and traffic.flows != 2:
        raise UsageError("the DUT's scenario is on each family's second flow only (its scope is flow2): "
                         "send two flows (flows = 2, --flows 2), or the trial would not meet it", "flows")
    if traffic.addresses != 1 and (dut.keeps_state or dut.nat64 or dut.has_table):
        raise UsageError("many addresses walk the lab's routed ranges: not through a DUT that keeps state (the "
                         "preliminary phase opens connections of one address pair), a NAT64 (its addresses are "
                         "the translator's) or a table (t1's frames walk its destinations)", "addresses")


def check_connections(traffic: Traffic, mix: Mix, bidirectional: bool, dut: DutConfig) -> None:
    """What RFC 9693's phases (trial/connections.py) need: plain UDP frames
    of one family from t1, one flow, one way, through a DUT that keeps
    state for that family on every flow (NAT44 for IPv4, stateful NAT64
    for IPv6): a frame from t2's side passes back only through a
    connection R1 holds."""
    if len(mix.versions) != 1:
        raise UsageError(f"{mix}: connections are opened by one family: mix 100/0 (NAT44) or 0/100 (NAT64)", "mix")
    plain = Traffic()
    others = (traffic.ext_headers, traffic.icmp_echo, traffic.flows, traffic.ext_headers_scope, traffic.runs_s,
              traffic.preliminary_connections, traffic.preliminary_rate_fps, traffic.foreground, traffic.addresses)
    defaults = (plain.ext_headers, plain.icmp_echo, plain.flows, plain.ext_headers_scope, plain.runs_s,
                plain.preliminary_connections, plain.preliminary_rate_fps, plain.foreground, plain.addresses)
    if others != defaults or bidirectional:  # any UDP ports: the phases walk their own
        raise UsageError("connections are opened by plain UDP frames from t1, one flow, one way (no extension "
                         "headers, ICMP echo, runs or second flow; not bidirectional)", "connections")
    (version, _), = mix.versions
    keeps = (dut.nat44 or dut.answers_only) if version == 4 else dut.nat64 == "stateful"
    if not keeps or dut.scope != "all":
        needed = 'nat44 = true (--nat44), xlat = "464" or dslite = true' if version == 4 else 'nat64 = "stateful" (--nat64 stateful)'
        raise UsageError(f"{mix}: IPv{version}'s connections need a DUT that keeps them on every flow: {needed}, "
                         f"scope all", "mix")


def check_on_path(traffic: Traffic, mix: Mix, frame_size: int, path: LabPath) -> None:
    """What the frames need of the lab's path from t1 to t2: links every
    family can cross; echo and extension-header frames are sent whole (the
    path's MTU must carry them); a tunnel's overhead must fit its link."""
    versions = {v for v, _ in mix.versions}
    for v in sorted(versions):
        why = path.problem(v, frame_size)
        if why:
            raise UsageError(f"{mix}: {why}", "mix")
    if traffic.icmp_echo and any(path.source_mtu(v, frame_size) for v in versions):
        raise UsageError(f"{frame_size}-byte frames do not fit the path MTU; echo frames are sent whole", "icmp_echo")
    if traffic.ext_headers and 6 in versions and path.source_mtu(6, frame_size) is not None:
        raise UsageError(f"{frame_size}-byte IPv6 frames exceed the path MTU {min(path.mtus())} and would be "
                         f"fragmented; frames with extension headers are sent whole", "ext_headers")
    tunnel.check_frame(path.tunnel, frame_size, versions, dict(path.links).get("r1-r2", 0))


def check_mesh(pattern: str, mix: Mix, frame_size: int, topology: str, link_speed_bps: float, mtu: Mtus) -> None:
    """Mesh frames are sent whole: every flow's path must carry them."""
    for src, dst in mesh_traffic.flows(topology, pattern):
        p = LabPath.build(topology, link_speed_bps, mtu, None, src, dst)
        for v, _ in mix.versions:
            why = p.problem(v, frame_size)
            if why or p.source_mtu(v, frame_size) is not None:
                raise UsageError(f"{src} -> {dst}: " + (why or f"{frame_size}-byte IPv{v} frames exceed the "
                                 f"path MTU {min(p.mtus())}; mesh frames are sent whole"), "mesh")
