"""nftables' flowtable fast path (the kernel's ``nf_flow_table``), in a VM
router's guest, whose Debian kernel has the modules (this machine's may not).

The kernel forwards a flow's first frames through its whole stack, where
the forward chain's ``flow add`` rule (RFC 768 UDP and TCP flows, once
connection tracking confirmed them) puts the flow in the flowtable; from
then on the flowtable's hook at each interface's ingress forwards its
frames itself: routing, TTL or hop limit, MACs and transmit, without the
stack (the kernel's documentation, networking/nf_flowtable).

Its counts, per family: the frames the flowtable took, read as the
difference of two counters on every router interface's ingress, one just
before the flowtable's hook and one just after (a frame it takes never
reaches the second), plus the kernel's forwarded datagrams
(:mod:`..kernel.plane`), which are the slow path's: ``slow_path_frames``.
A frame the flowtable takes and cannot transmit (rare: no writable copy) is
counted as forwarded; the engine's count shows it lost.

Connection tracking keeps an entry for each flow, so the DUT configurations
the kernel's stack carries out (rule sets, tunnels, translators, shaping)
are refused: the fast path would pass them by.
"""

from __future__ import annotations

import re
from typing import Any

from ....core.errors import LabError
from ...model.dut import CONNTRACK_SYSCTLS
from ..kernel.plane import SNMP_FILES, forwarded
from ..protocol import RouterHost, place_text

#: Its nftables tables: the flowtable with the forward chain that fills it, and the ingress counters around it.
TABLE = "v6b_flowtable"
COUNT_TABLE = "v6b_flowtable_count"
#: Hook priorities at ingress: the flowtable's, and its two counters' just before and just after it.
PRIORITY = 0
BEFORE, AFTER = PRIORITY - 10, PRIORITY + 10
FAMILIES = {4: "ip", 6: "ip6"}


def ruleset(interfaces: tuple[str, ...]) -> str:
    """The nftables rule set (``nft -f``) over ``interfaces``: the flowtable and the counters around its hook."""
    devices = ", ".join(f'"{i}"' for i in interfaces)
    counters = "".join(f"    counter ipv{f}_{w} {{ }}\n" for w in ("before", "after") for f in FAMILIES)

    def chain(where: str, priority: int) -> str:
        rules = "".join(f'        meta protocol {p} counter name "ipv{f}_{where}"\n' for f, p in FAMILIES.items())
        return (f"    chain {where} {{\n        type filter hook ingress devices = {{ {devices} }} "
                f"priority {priority}; policy accept;\n{rules}    }}\n")

    return (f"table inet {TABLE} {{\n"
            f"    flowtable fast {{\n        hook ingress priority {PRIORITY}; devices = {{ {devices} }};\n    }}\n"
            f"    chain forward {{\n        type filter hook forward priority filter; policy accept;\n"
            f"        meta l4proto {{ tcp, udp }} flow add @fast\n    }}\n}}\n"
            f"table netdev {COUNT_TABLE} {{\n{counters}{chain('before', BEFORE)}{chain('after', AFTER)}}}\n")


def counter_values(listing: str) -> dict[str, int]:
    """Packets by counter name, from ``nft list counters table …``'s output ``listing``."""
    return {m[1]: int(m[2]) for m in re.finditer(r"counter (\w+) \{\s*packets (\d+) bytes \d+", listing)}


class FlowtablePlane:
    """The flowtable fast path, in VM routers' guests."""

    name = "flowtable"
    summary = "nftables' flowtable fast path beside the kernel"
    router_kinds: tuple[str, ...] = ("vm",)
    carries = frozenset({"scope"})
    keeps_state = True  # a flow's first frames take the slow path, which puts it in the flowtable
    #: The flowtable, its ``flow add`` and named counters.
    guest_modules: tuple[str, ...] = ("nf_flow_table_inet", "nft_flow_offload", "nft_objref")

    def check_machine(self) -> None:
        """Nothing on this machine: the guest image holds the modules (lab/vm/vm_image.MODULES)."""

    def set_up(self, router: RouterHost) -> dict[str, Any]:
        """The rule set loaded in the router (``nft -f``), its connection table a router's
        (lab/model/dut.CONNTRACK_SYSCTLS); returns the tables it made."""
        for module in self.guest_modules:
            router.command(["modprobe", module])
        router.command(["nft", "-f", place_text(router, "flowtable.nft", ruleset(router.interfaces))])
        for key, value in CONNTRACK_SYSCTLS.items():
            router.command(["sysctl", "-q", "-w", f"{key}={value}"])
        return {"tables": [f"inet {TABLE}", f"netdev {COUNT_TABLE}"], "devices": list(router.interfaces)}

    def counts(self, router: RouterHost, setup: dict[str, Any]) -> dict[str, int]:
        c = counter_values(router.command(["nft", "list", "counters", "table", "netdev", COUNT_TABLE]))
        try:
            fast = {f: c[f"ipv{f}_before"] - c[f"ipv{f}_after"] for f in FAMILIES}
        except KeyError as e:
            raise LabError(f"{router.name}: the flowtable's counter {e} is gone") from None
        v4, v6 = forwarded(router.command(["cat", *SNMP_FILES]))
        return {"forwarded_ipv4_frames": fast[4] + v4, "forwarded_ipv6_frames": fast[6] + v6,
                "slow_path_frames": v4 + v6}

    def record(self) -> dict[str, Any]:
        return {"name": self.name, "ruleset": ruleset(("<interface>",))}


PLANE = FlowtablePlane()
