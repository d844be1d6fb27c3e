"""Encapsulation, DS-Lite (RFC 6333; RFC 8219 §4's third class), on
topology b with VM routers: a B4 on R1, the customer's edge, carries t1's
IPv4 in IPv6 (RFC 2473, next header 4) to the AFTR on R2, the provider's
router, which takes the IPv4 packet out and sends it on toward t2 with
its own address as the source (NAT44). What the routers are, as commands
their guests run at boot and as R2's nftables text (lab/vm/vm_config.py
runs them).

- **B4** (R1): the ``4in6`` tunnel of VM routers (``ip6tnl``, ipip6,
  lab/model/tunnel.VM_TUNNELS) from R1's to R2's address on their link,
  with RFC 6333 §5.7's well-known address 192.0.0.2/29 on it; R1 routes
  t2's IPv4 network into it.
- **AFTR** (R2): the same tunnel back, 192.0.0.1/29 on it, t1's IPv4
  network routed into it for the replies; source NAT of t1's network to
  R2's address toward t2 (a table of its own, :data:`TABLE`), and a frame
  from t2's side that would open a connection toward t1's network dropped
  (:data:`UNSOLICITED`): t2 reaches t1 only by answering t1's connections,
  as behind a real AFTR. With one B4 the AFTR's extended binding
  (softwire and inner address, RFC 6333 §6.6) is the inner address alone.

Only VM routers: this machine's kernel has no ``ip6tnl`` in namespaces,
and its SRv6 stand-in (End.DX4) takes the packet out past the netfilter
hooks the AFTR's NAT runs in. The 40-byte outer header counts in the
path's line rate (:data:`LINK`).
"""

from __future__ import annotations

from .topology import Topology
from .tunnel import VM_TUNNELS, TUNNEL_DEV, Tunnel, network

#: The tunnel that carries DS-Lite between the routers (its device, MTU and routes: lab/vm/vm_config.tunnel_lines).
TUNNEL = "4in6"
#: RFC 6333 §5.7: the B4's and the AFTR's addresses on the softwire, from 192.0.0.0/29.
B4_V4, AFTR_V4 = "192.0.0.2/29", "192.0.0.1/29"
#: The link from R1 to R2 as the path's line rate and MTU checks see it (trial/path.py).
LINK = Tunnel("DS-Lite", 4, VM_TUNNELS[TUNNEL].overhead_bytes,
              "DS-Lite (RFC 6333): ip6tnl ipip6 from the B4 (R1) to the AFTR (R2), NAT44 on the AFTR")
TABLE = "v6bench_aftr"
#: The rule that keeps t1 unreachable from t2 but by replies.
UNSOLICITED = "ct state new counter drop"


def softwire_commands(router: str) -> list[list[str]]:
    """The softwire's well-known address on ``router``'s tunnel device (after the device exists)."""
    return [["ip", "addr", "replace", B4_V4 if router == "r1" else AFTR_V4, "dev", TUNNEL_DEV]]


def aftr_ruleset(topo: Topology) -> str:
    """R2's nftables text: NAT44 of t1's network to R2's address on its
    link to t2, and nothing new from t2's side toward t1's network."""
    (t1,) = topo.node("t1").interfaces
    inside = network(t1.ipv4)
    (out,) = [i for i in topo.node("r2").interfaces if i.peer_node == "t2"]
    to = out.ipv4.split("/")[0]
    return (f"table ip {TABLE} {{\n"
            f"  chain forward {{\n    type filter hook forward priority filter; policy accept;\n"
            f'    iifname "{out.name}" ip daddr {inside} {UNSOLICITED}\n  }}\n'
            f"  chain postrouting {{\n    type nat hook postrouting priority srcnat; policy accept;\n"
            f'    oifname "{out.name}" ip saddr {inside} counter snat to {to}\n  }}\n}}\n')

