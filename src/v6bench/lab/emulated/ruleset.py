"""The nftables rule sets of a DUT configuration (lab/model/dut.DutConfig)
on the routers v6bench builds, namespace and VM alike (pure text: the
namespace router loads it, lab/emulated/build.py; a VM router's startup
script does, lab/vm/vm_config.py): R1's forward chain with its access
lists (``acl``), limiter (``limit_fps``) and connection limits
(``max_connections``, ``max_new_fps``); the source NAT of NAT44, of TAYGA's
pool (stateful NAT64, 464XLAT's PLAT) and of DS-Lite's AFTR."""

from __future__ import annotations

import ipaddress

from ...core.frames import FLOW2_SRC_PORTS, port_match
from ..model import dslite, translation, tunnel
from ..model.dut import DENY_BASE_V4, DENY_BASE_V6, DutConfig
from ..model.topology import Topology

TABLE = "v6bench"
NAT_TABLE = "v6bench_nat"
#: The set whose ``ct count`` bounds the connections R1 holds (``max_connections``).
CONNECTIONS_SET = "connections"


def burst_frames(limit_fps: int) -> int:
    """The limiter's bucket: 25 ms of traffic at the limit (at least 5, nft's
    default). A software router takes frames in batches after each wake-up,
    and a stall of a VM's vCPU delivers all that arrived meanwhile at once: a
    5-frame bucket would drop them and make the DUT's capacity a fraction of
    N, and a 10-ms one still did after the stalls of 10–25 ms seen on a
    2-vCPU VM. With 25 ms, a trial of D seconds passes up to N + N/40/D
    frames/s (+1.25 % for 2-s trials)."""
    return max(5, limit_fps // 40)


def _acl_chain(family: str, cfg: DutConfig, permit: str) -> str:
    """The list of one IP version: the denies, the permit (which returns to
    the forward chain), then the implicit deny."""
    key, base = ("ip", DENY_BASE_V4) if family == "v4" else ("ip6", DENY_BASE_V6)
    lines = []
    for k in range(cfg.acl - 1):
        net = ipaddress.ip_network(f"{base.network_address + k * base.num_addresses}/{base.prefixlen}")
        lines.append(f"{key} daddr {net} drop")
    lines.append(f"{key} daddr {permit}" + (" meta l4proto udp" if cfg.acl_udp_only else "") + " counter return")
    lines.append("counter drop")
    body = "".join(f"    {x}\n" for x in lines)
    return f"  chain acl_{family} {{\n{body}  }}\n"


def ports(topo: Topology, router: str) -> tuple[str, str]:
    """``router``'s (input, output) interface for the t1 → t2 direction."""
    order = {n.name: k for k, n in enumerate(topo.nodes)}
    node = topo.node(router)
    ifs = sorted(node.interfaces, key=lambda i: order[i.peer_node])
    return ifs[0].name, ifs[-1].name


def _flow2(cfg: DutConfig) -> str:
    """The match that picks a scoped scenario's flow (empty when unscoped)."""
    return f" udp sport {port_match(FLOW2_SRC_PORTS)}" if cfg.scope == "flow2" else ""


def _nat44(cfg: DutConfig, topo: Topology, router: str) -> str:
    """IPv4 source NAT of the test direction, in a table of the ``ip``
    family so that only IPv4 is connection-tracked; scoped, only flow 2
    is rewritten and the other frames from t1's subnet are not tracked."""
    into, out = ports(topo, router)
    node = topo.node(router)
    inside = node.interface(into).ipv4  # R1's address with the t1-side prefix
    src_net = ipaddress.ip_interface(inside).network
    to = node.interface(out).ipv4.split("/")[0]
    raw = (f"  chain prerouting {{\n    type filter hook prerouting priority raw; policy accept;\n"
           f"    ip saddr {src_net} udp sport != {port_match(FLOW2_SRC_PORTS)} notrack\n  }}\n") if cfg.scope == "flow2" else ""
    return (f"table ip {NAT_TABLE} {{\n{raw}  chain postrouting {{\n"
            f"    type nat hook postrouting priority srcnat; policy accept;\n"
            f'    oifname "{out}" ip saddr {src_net}{_flow2(cfg)} counter snat to {to}\n  }}\n}}\n')


#: The bucket of ``max_new_fps`` [packets]. Frames reach R1 in clumps when the host holds a thread for a few ms: with a
#: 5-packet bucket R1 dropped new connections well below its rate (measured on EPYC-25, 1,000 connections: 2 at
#: 1,500/s, 8 and 19 at 1,800/s, each loss its own drop counter's), so the known answer failed by chance. 40 packets
#: hold a 20-ms clump at 2,000/s; N connections can then pass at up to R × N / (N − 40): +4.2 % for N = 1,000.
NEW_BURST = 40


def ruleset(cfg: DutConfig, topo: Topology, router: str, tayga: bool = True) -> str | None:
    """The nftables text for ``router`` of ``topo`` (None if it needs none);
    ``tayga``: with stateful NAT64 (or 464XLAT's PLAT), the source NAT TAYGA's pool needs
    (a namespace router's; Jool in a VM router's kernel needs none)."""
    if cfg.dslite:  # the AFTR's NAT44 on R2 (lab/model/dslite.py); the B4 keeps no state
        return dslite.aftr_ruleset(topo) if router == "r2" else None
    if cfg.xlat:  # the PLAT's source NAT on R2, as the stateful NAT64's on R1; the CLAT keeps no state
        if router != "r2" or not tayga:
            return None
        _, out = ports(topo, router)
        return translation.stateful_nat(out, topo.node(router).interface(out).ipv4.split("/")[0])
    if router != "r1" or not (cfg.limit_fps or cfg.acl or cfg.nat44 or cfg.nat64 == "stateful" or cfg.max_connections
                              or cfg.max_new_fps):
        return None
    nat = _nat44(cfg, topo, router) if cfg.nat44 else ""
    if cfg.nat64 == "stateful" and tayga:
        _, out = ports(topo, router)
        nat += translation.stateful_nat(out, topo.node(router).interface(out).ipv4.split("/")[0])
    if not (cfg.limit_fps or cfg.acl or cfg.max_connections or cfg.max_new_fps):
        return nat
    node = topo.node(router)
    rules, chains = [], ""
    if cfg.acl:
        into, out = ports(topo, router)
        (t2,) = topo.node("t2").interfaces
        dst = {"v4": t2.ipv4.split("/")[0], "v6": t2.ipv6.split("/")[0]}
        chains = _acl_chain("v4", cfg, dst["v4"]) + _acl_chain("v6", cfg, dst["v6"])
        # With 6in4, IPv6 leaves R1 by the VXLAN device (lab/model/tunnel.py).
        out6 = tunnel.VXLAN_DEV if cfg.tunnel == "6in4" else out
        for where, m4, m6 in (("in", f'iifname "{into}"', f'iifname "{into}"'),
                              ("out", f'oifname "{out}"', f'oifname "{out6}"')):
            if cfg.acl_at in (where, "both"):
                rules += [f"{m} meta nfproto {fam}{_flow2(cfg)} jump acl_{fam[2:]}" for fam, m in (("ipv4", m4), ("ipv6", m6))
                          if cfg.acl_family in (fam, "both")]
    if cfg.limit_fps:
        burst = burst_frames(cfg.limit_fps)
        rules += [f'iifname "{i.name}" limit rate over {cfg.limit_fps}/second burst {burst} packets drop' for i in node.interfaces]
    sets = ""
    if cfg.max_new_fps:  # a connection's first packet opens it: above the rate it is dropped, and the connection with it
        rules.append(f"meta nfproto ipv4 ct state new limit rate over {cfg.max_new_fps}/second burst {NEW_BURST} packets "
                     "counter drop")
    if cfg.max_connections:  # every test connection goes to t2's one address: its count is the table's
        sets = f"  set {CONNECTIONS_SET} {{\n    type ipv4_addr; size 65535; flags dynamic;\n  }}\n"
        rules.append(f"ct state new add @{CONNECTIONS_SET} {{ ip daddr ct count over {cfg.max_connections} }} counter drop")
    body = "".join(f"    {r}\n" for r in rules)
    return (f"table inet {TABLE} {{\n{sets}{chains}  chain forward {{\n"
            f"    type filter hook forward priority filter; policy accept;\n{body}  }}\n}}\n") + nat
