"""Egress shaping of the routers' interfaces at the nominal link speed
(``--shape``), so that traffic converging on one output port really
congests it, as on a wire.

Each router interface gets a token bucket (``tc qdisc replace … root tbf``)
at the lab's link speed, counted at layer 1: a size table adds 24 bytes to
each frame (4 FCS, which a veth frame lacks, plus 8 preamble and 12
inter-frame gap), so 100M passes 8,127 frames/s of 1518 bytes, as a Fast
Ethernet port does. The queue holds 20 ms at that speed (at least two
maximum frames), about the output hold queue of a small router (seed 000's
1841: 40 packets of 1518 bytes at 100 Mb/s are 5 ms). The bucket holds 2 ms
at that speed (at least one maximum frame): with a one-frame bucket the
shaper depends on a timer firing on time for every frame, and on a 2-vCPU
VM it passed only 75 % of line rate; with 2 ms it passes line rate within
0.3 % (128 and 1518 bytes at 100M, measured), at the price of bursts of at
most 2 ms of line rate. Frames the queue cannot take are dropped by the
router: the DUT's loss.
"""

from __future__ import annotations

from ...core.rates import ETHERNET_HEADER_BYTES, FCS_BYTES, L1_OVERHEAD_BYTES, l1_bytes
from ..machine import nsctl

#: What the kernel does not count in a packet's length (it counts the Ethernet header): FCS and layer 1.
STAB_OVERHEAD_BYTES = FCS_BYTES + L1_OVERHEAD_BYTES
QUEUE_S = 0.020
BURST_S = 0.002


def tbf_args(ifname: str, link_speed_bps: float, mtu: int) -> list[str]:
    """The ``tc`` arguments shaping ``ifname`` to ``link_speed_bps`` (L1)."""
    frame = l1_bytes(mtu + ETHERNET_HEADER_BYTES + FCS_BYTES)
    limit = max(2 * frame, int(link_speed_bps / 8 * QUEUE_S))
    burst = max(frame + 1, int(link_speed_bps / 8 * BURST_S))
    return ["qdisc", "replace", "dev", ifname, "root", "stab", "overhead", str(STAB_OVERHEAD_BYTES), "linklayer", "ethernet",
            "tbf", "rate", f"{int(link_speed_bps)}bit", "burst", str(burst), "limit", str(limit)]


def apply(netns: str, ifname: str, link_speed_bps: float, mtu: int) -> None:
    nsctl.command(netns, ["tc", *tbf_args(ifname, link_speed_bps, mtu)])
