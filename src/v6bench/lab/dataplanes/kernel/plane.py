"""Linux's kernel forwarding: the router's own IPv4 and IPv6 stacks, with
whatever the DUT configuration adds (nftables rule sets, tunnels,
translators, shaping).

Its count is the kernel's own: ``ForwDatagrams`` of ``/proc/net/snmp`` (IPv4
datagrams forwarded, RFC 4293's ipSystemStatsOutForwDatagrams) and
``Ip6OutForwDatagrams`` of ``/proc/net/snmp6``, per network namespace (or
guest). It has no slow path.
"""

from __future__ import annotations

from typing import Any

from ...model.dut import DutConfig
from ..protocol import RouterHost

SNMP_FILES = ["/proc/net/snmp", "/proc/net/snmp6"]


def forwarded(text: str) -> tuple[int, int]:
    """The IPv4 and IPv6 datagrams forwarded, from ``cat /proc/net/snmp /proc/net/snmp6``'s output ``text``."""
    v4 = v6 = None
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("Ip: ") and i + 1 < len(lines) and lines[i + 1].startswith("Ip: ") and v4 is None:
            names, values = line.split()[1:], lines[i + 1].split()[1:]
            if "ForwDatagrams" in names and values and values[0].isdigit():
                v4 = int(values[names.index("ForwDatagrams")])
        fields = line.split()
        if len(fields) == 2 and fields[0] == "Ip6OutForwDatagrams":
            v6 = int(fields[1])
    if v4 is None or v6 is None:
        raise ValueError("no ForwDatagrams (/proc/net/snmp) or Ip6OutForwDatagrams (/proc/net/snmp6)")
    return v4, v6


class KernelPlane:
    """The kernel's forwarding: nothing to set up, every DUT configuration carried."""

    name = "kernel"
    summary = "Linux's kernel forwarding"
    router_kinds: tuple[str, ...] = ("ns", "vm")
    carries = frozenset(f.name for f in DutConfig.__dataclass_fields__.values())
    keeps_state = False
    guest_modules: tuple[str, ...] = ()

    def check_machine(self) -> None:
        """Nothing beyond the lab's own set-up."""

    def set_up(self, router: RouterHost) -> dict[str, Any]:
        return {}

    def counts(self, router: RouterHost, setup: dict[str, Any]) -> dict[str, int]:
        v4, v6 = forwarded(router.command(["cat", *SNMP_FILES]))
        return {"forwarded_ipv4_frames": v4, "forwarded_ipv6_frames": v6, "slow_path_frames": 0}

    def record(self) -> dict[str, Any]:
        return {"name": self.name}


PLANE = KernelPlane()
