"""The OpenFlow tables that make an Open vSwitch bridge a router, from the
router's kernel routes and addresses (pure: no command runs here).

- table 0: ARP (requests and replies) and ND (solicitations, advertisements)
  teach table 1 the sender's MAC by its IP address (``learn``), then are
  dropped: the kernel, which sees every frame (the userspace datapath's
  ports are packet sockets), answers them itself. A frame for one of the
  router's own addresses is dropped likewise. With the kernel datapath the
  kernel sees only what the bridge gives it: each port's addresses are on
  an internal port of its own (``kernel_ports``), to which ARP, ND and the
  router's own frames from that port go, and whose frames (the kernel's
  answers, its ARP and ND) go out of that port. A transit frame matches its route
  (longest prefix first): source MAC the egress port's, TTL or hop limit
  decreased (``dec_ttl``; IPv4's checksum updated), the next hop's address
  into ``reg0`` (IPv4) or ``xxreg1`` (IPv6, registers 4-7: the gateway, or
  the destination on a connected route), the egress port into ``reg8``,
  then tables 1 and 2;
- table 1: the neighbours learned: the next hop's MAC, and ``reg9`` bit 0 set;
- table 2: out of ``reg8`` where the neighbour was known, one flow a family
  (their packet counts are the data plane's count of forwarded frames);
  a frame whose next hop is not known yet is dropped.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

#: The flows of table 2, one a family: their packet counts are what the bridge forwarded.
OUT_IPV4 = "table=2,priority=10,reg9=0x1/0x1,ip"
OUT_IPV6 = "table=2,priority=10,reg9=0x1/0x1,ipv6"
_LEARN = "load:NXM_OF_ETH_SRC[]->NXM_OF_ETH_DST[],load:1->NXM_NX_REG9[0]"


@dataclass(frozen=True)
class Route:
    """A kernel route: destination prefix, egress device, gateway (None: connected)."""

    dst: str
    dev: str
    gateway: str | None = None


_NEIGHBOURS = (("arp", "eth_type=0x800,NXM_NX_REG0[]=NXM_OF_ARP_SPA[]"),
               ("icmp6,icmp_type=135", "eth_type=0x86dd,NXM_NX_XXREG1[]=NXM_NX_IPV6_SRC[]"),
               ("icmp6,icmp_type=136", "eth_type=0x86dd,NXM_NX_XXREG1[]=NXM_NX_ND_TARGET[]"))


def table(routes: list[Route], local: list[str], ports: dict[str, int], macs: dict[str, str],
          kernel_ports: dict[str, int] | None = None) -> list[str]:
    """The flows (``ovs-ofctl add-flows`` lines) for ``routes``, the router's own addresses ``local``, its
    devices' OpenFlow port numbers ``ports`` and MACs ``macs``; routes on other devices are left out.
    ``kernel_ports``: each device's internal port (its OpenFlow number), where the kernel has its addresses
    (the kernel datapath); None: the kernel sees every frame itself (the userspace datapath)."""
    flows = ["table=0,priority=0,actions=drop", f"{OUT_IPV4},actions=output:NXM_NX_REG8[]",
             f"{OUT_IPV6},actions=output:NXM_NX_REG8[]"]
    own = [f"{'ip,nw_dst' if ipaddress.ip_address(a).version == 4 else 'ipv6,ipv6_dst'}={ipaddress.ip_address(a)}"
           for a in local]
    if kernel_ports is None:
        flows += [f"table=0,priority=1000,{m},actions=learn(table=1,priority=100,{k},{_LEARN})" for m, k in _NEIGHBOURS]
        flows += [f"table=0,priority=900,{m},actions=drop" for m in own]
    else:
        for dev, k in kernel_ports.items():
            p = ports[dev]
            flows.append(f"table=0,priority=1100,in_port={k},actions=output:{p}")
            flows += [f"table=0,priority=1000,in_port={p},{m},actions=learn(table=1,priority=100,{lk},{_LEARN}),"
                      f"output:{k}" for m, lk in _NEIGHBOURS]
            flows += [f"table=0,priority=900,in_port={p},{m},actions=output:{k}" for m in own]
    for r in routes:
        if r.dev not in ports:
            continue
        net = ipaddress.ip_network(r.dst, strict=False)
        v4 = net.version == 4
        match = f"ip,nw_dst={net}" if v4 else f"ipv6,ipv6_dst={net}"
        if r.gateway:
            hop = f"load:{int(ipaddress.ip_address(r.gateway)):#x}->NXM_NX_{'REG0' if v4 else 'XXREG1'}[]"
        else:
            hop = "move:NXM_OF_IP_DST[]->NXM_NX_REG0[]" if v4 else "move:NXM_NX_IPV6_DST[]->NXM_NX_XXREG1[]"
        flows.append(f"table=0,priority={100 + net.prefixlen},{match},actions=set_field:{macs[r.dev]}->eth_src,"
                     f"dec_ttl,{hop},load:{ports[r.dev]}->NXM_NX_REG8[],resubmit(,1),resubmit(,2)")
    return flows
