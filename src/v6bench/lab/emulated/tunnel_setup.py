"""The tunnels of :mod:`v6bench.lab.model.tunnel` set up on namespace routers,
with the kernel's own stand-ins (that module's docstring): ``4in6`` by
Segment Routing routes, ``6in4`` by a VXLAN device, both through ``ip``
(pyroute2 0.9 has no ``encap.red`` mode for seg6 routes, and one tool for
the tunnel keeps its commands readable beside the VM routers' script,
lab/vm/vm_config.py)."""

from __future__ import annotations

from ..machine import nsctl
from ..model.site import Site
from ..model.topology import Topology
from ..model.tunnel import INNER_V6, SCOPED_PREF, SID, TUNNELS, VXLAN_DEV, VXLAN_PORT, VXLAN_VNI, check_topology, network, scoped_rule, table


def _ip(netns: str, *args: str) -> None:
    nsctl.command(netns, ["ip", *args])


def configure(site: Site, topo: Topology, name: str, mtu: int, only: str | None = None, scoped: bool = False) -> None:
    """Sets the tunnel up on R1 and R2 (``only``: that router's half), after
    their addresses and static routes, for every frame of the carried
    version or (``scoped``) for flow 2's only; idempotent."""
    check_topology(name, topo.name)
    t = TUNNELS[name]
    for me, peer in (("r1", "r2"), ("r2", "r1")):
        if only not in (None, me):
            continue
        ns = site.netns(me)
        node, other = topo.node(me), topo.node(peer)
        core = node.interface(f"{me}-{peer}")
        peer_core = other.interface(f"{peer}-{me}")
        (edge,) = [i for i in node.interfaces if i is not core]
        tester = topo.node(edge.peer_node).interface(edge.peer_name)  # the tester behind me
        far_tester = topo.node("t2" if me == "r1" else "t1").interfaces[0]
        if t.name == "4in6":
            _ip(ns, "-6", "route", "replace", f"{SID[peer]}/128", "via", peer_core.ipv6.split("/")[0], "dev", core.name)
            far_net = network(far_tester.ipv4)
            _ip(ns, "route", "replace", far_net, "encap", "seg6", "mode", "encap.red", "segs", SID[peer], "dev", core.name,
                *table(scoped))
            _ip(ns, "-6", "route", "replace", f"{SID[me]}/128", "encap", "seg6local", "action", "End.DX4",
                "nh4", tester.ipv4.split("/")[0], "dev", edge.name)
        else:
            links = [line.split(":")[1].strip().split("@")[0] for line in nsctl.command(ns, ["ip", "-o", "link", "show"]).splitlines()]
            if VXLAN_DEV not in links:
                _ip(ns, "link", "add", VXLAN_DEV, "mtu", str(mtu - t.overhead_bytes), "type", "vxlan", "id", str(VXLAN_VNI),
                    "local", core.ipv4.split("/")[0], "remote", peer_core.ipv4.split("/")[0], "dstport", str(VXLAN_PORT),
                    "dev", core.name)
            _ip(ns, "link", "set", VXLAN_DEV, "up")
            _ip(ns, "-6", "addr", "replace", f"{INNER_V6[me]}/64", "dev", VXLAN_DEV, "nodad")
            _ip(ns, "-6", "route", "replace", network(far_tester.ipv6), "via", INNER_V6[peer], "dev", VXLAN_DEV,
                *table(scoped))
        rule = scoped_rule(t.carried)
        if scoped and not nsctl.command(ns, ["ip", rule[0], "rule", "show", "pref", SCOPED_PREF]).strip():
            _ip(ns, *rule)
