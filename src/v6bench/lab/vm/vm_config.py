"""A VM router's configuration as the shell script its guest runs at every
boot (lab/vm/vm.py writes it on the guest's disk).

The same configuration as a namespace router's (lab/emulated/build.py): the role's
sysctls, each interface's MTU and addresses (no IPv6 on a link below 1280
bytes, IPv6 without DAD), the static routes, the DUT's nftables rule set
(lab/model/dut.py) and shaping (lab/emulated/shape.py), the tunnels (lab/model/tunnel.py, real
devices here), NAT64 by Jool in the guest's kernel (lab/vm/jool.py, where a namespace
router runs TAYGA); and the management interface with snmpd, which serves the
guest's CPU ticks and interface counters (lab/external/snmp.py reads them as it
reads a physical router's).
"""

from __future__ import annotations

from typing import Any

from ..emulated import ruleset as dut_rules
from ..model import dslite
from . import jool
from ..emulated import shape
from ..model import tunnel
from .guest import shell_line
from ..model.dut import CONNTRACK_SYSCTLS, DutConfig
from ..model.mtu import IPV6_MIN, Mtus
from ..model.mtu import routes as mtu_routes
from ..model.topology import Topology
from .vm import MGMT_GUEST, MGMT_HOST, MGMT_PREFIX, SNMP_COMMUNITY, SNMP_WRITE_COMMUNITY

SNMPD_CONF = "/run/snmpd.conf"
#: A stateful VM router's connection table: its guest's kernel sizes it by memory (2,048 entries in 256 MB), below
#: the 10,100 connections a stream of RFC 9693's preliminary phase opens by default; 65,536 (up to about 20 MB).


_q = shell_line


def snmpd_lines() -> list[str]:
    """snmpd on the management address, read-only to the host's end only;
    the interface cache off, so counters are fresh at every read."""
    conf = (f"agentAddress udp:{MGMT_GUEST}:161\n"
            f"rocommunity {SNMP_COMMUNITY} {MGMT_HOST}/32\n"
            f"rwcommunity {SNMP_WRITE_COMMUNITY} {MGMT_HOST}/32\n")
    return [f"cat > {SNMPD_CONF} <<'EOF'\n{conf}EOF",
            "mkdir -p /run/snmp",
            f"SNMP_PERSISTENT_DIR=/run/snmp MIBS= snmpd -C -c {SNMPD_CONF} -Lf /run/snmpd.log -M /dev/null -m '' "
            "-p /run/snmpd.pid"]


def startup_script(topo: Topology, router: str, mtu: Mtus, sysctls: dict[str, Any], dut: DutConfig,
                   link_speed_bps: float) -> str:
    """The guest's startup configuration for ``router`` of ``topo``."""
    node = topo.node(router)
    lines = ["set -e"]
    lines += [f"sysctl -q -w {k}={v}" for k, v in sysctls.items()]
    for i in node.interfaces:
        m = mtu.of(i.node, i.peer_node)
        lines.append(_q(["ip", "link", "set", "dev", i.name, "mtu", str(m), "up"]))
        lines.append(_q(["ip", "addr", "replace", i.ipv4, "dev", i.name]))
        if m >= IPV6_MIN:
            lines.append(_q(["ip", "-6", "addr", "replace", i.ipv6, "dev", i.name, "nodad"]))
    lines += [_q(["ip", "route", "replace", r.dst, "via", r.gateway]) for r in mtu_routes(node, mtu)]
    lines.append(_q(["ip", "link", "set", "dev", "mgmt", "up"]))
    lines.append(_q(["ip", "addr", "replace", f"{MGMT_GUEST}/{MGMT_PREFIX}", "dev", "mgmt"]))
    text = dut_rules.ruleset(dut, topo, router, tayga=False)  # Jool translates in the kernel: no pool to NAT
    if text:
        lines.append(f"{_q(['nft', '-f', '-'])} <<'EOF'\n{text}EOF")
        if dut.keeps_state:  # the rule set loaded connection tracking: its table as large as a router's
            lines += [f"sysctl -q -w {k}={v}" for k, v in CONNTRACK_SYSCTLS.items()]
    if dut.shape:
        for i in node.interfaces:
            lines.append(_q(["tc", *shape.tbf_args(i.name, link_speed_bps, mtu.of(i.node, i.peer_node))]))
    if dut.tunnel:  # topology b only (lab/model/tunnel.check_topology): routers r1 and r2
        lines += tunnel_lines(topo, router, dut.tunnel, mtu, dut.scope == "flow2")
    if dut.dslite:  # topology b: the B4 on R1, the AFTR on R2 (lab/model/dslite.py; its NAT44 in the rule set)
        lines += tunnel_lines(topo, router, dslite.TUNNEL, mtu)
        lines += [_q(argv) for argv in dslite.softwire_commands(router)]
    if dut.xlat:  # topology b: the CLAT on R1, the PLAT on R2 (lab/model/xlat.py)
        lines += [_q(argv) for argv in jool.xlat_commands(topo, router)]
    if dut.nat64 and router == "r1":  # topology a only (lab/model/dut.py)
        t1_ipv6 = topo.node("t1").interfaces[0].ipv6.split("/")[0]
        r1_t2 = node.interface("r1-t2").ipv4.split("/")[0]
        lines += [_q(argv) for argv in jool.setup_commands(dut.nat64, t1_ipv6, r1_t2)]
    lines += snmpd_lines()
    return "\n".join(lines) + "\n"


def links_up_script(topo: Topology, router: str, mtu: Mtus, dut: DutConfig = DutConfig()) -> str:
    """After a soft reset's links down: the links up, and the static routes
    the kernel dropped with them (addresses stay: ``keep_addr_on_down``)."""
    node = topo.node(router)
    lines = [_q(["ip", "link", "set", "dev", i.name, "up"]) for i in node.interfaces]
    lines += [_q(["ip", "neigh", "flush", "nud", s]) for s in ("incomplete", "failed")]
    lines += [_q(["ip", "route", "replace", r.dst, "via", r.gateway]) for r in mtu_routes(node, mtu)]
    if dut.tunnel or dut.dslite:  # its route again over the static one just restored
        lines += tunnel_route_lines(topo, router, dut.tunnel or dslite.TUNNEL, dut.scope == "flow2")
    return "\n".join(lines) + "\n"


def links_down_script(topo: Topology, router: str) -> str:
    return "\n".join(_q(["ip", "link", "set", "dev", i.name, "down"]) for i in topo.node(router).interfaces) + "\n"


def tunnel_lines(topo: Topology, router: str, name: str, mtu: Mtus, scoped: bool = False) -> list[str]:
    """The real tunnel (lab/model/tunnel.VM_TUNNELS) on VM router ``router`` of
    topology b, after its addresses and static routes: the device between
    the R1–R2 link's addresses (IPv4 ends for 6in4 and gre6in4, IPv6 ends
    for 4in6 and gre4in6), its MTU the link's less the overhead, and then
    :func:`tunnel_route_lines`; ``scoped``: for flow 2 only, by the rule of
    :func:`v6bench.lab.model.tunnel.scoped_rule`."""
    t = tunnel.VM_TUNNELS[name]
    me, peer = ("r1", "r2") if router == "r1" else ("r2", "r1")
    core = topo.node(me).interface(f"{me}-{peer}")
    peer_core = topo.node(peer).interface(f"{peer}-{me}")
    dev, m = tunnel.TUNNEL_DEV, mtu.of(me, peer) - t.overhead_bytes
    if t.carried == 6:  # over IPv4
        local, remote = core.ipv4.split("/")[0], peer_core.ipv4.split("/")[0]
        mode = "sit" if t.name == "6in4" else "gre"
        lines = [_q(["ip", "tunnel", "add", dev, "mode", mode, "local", local, "remote", remote, "ttl", "64"]),
                 _q(["ip", "link", "set", "dev", dev, "mtu", str(m), "up"]),
                 _q(["ip", "-6", "addr", "replace", f"{tunnel.INNER_V6[me]}/64", "dev", dev, "nodad"])]
    else:  # over IPv6
        local, remote = core.ipv6.split("/")[0], peer_core.ipv6.split("/")[0]
        mode = "ipip6" if t.name == "4in6" else "ip6gre"
        lines = [_q(["ip", "-6", "tunnel", "add", dev, "mode", mode, "local", local, "remote", remote,
                     "encaplimit", "none", "hoplimit", "64"]),
                 _q(["ip", "link", "set", "dev", dev, "mtu", str(m), "up"])]
    if scoped:  # once, with the device: a rule outlives the links' resets
        lines.append(_q(["ip", *tunnel.scoped_rule(t.carried)]))
    return lines + tunnel_route_lines(topo, router, name, scoped)


def tunnel_route_lines(topo: Topology, router: str, name: str, scoped: bool = False) -> list[str]:
    """The route to the far tester's subnet of the carried version through
    the tunnel device, replacing the static one over the bare link or
    (``scoped``) in the table of flow 2's rule (set up with the device, and
    again after a soft reset restored the static one)."""
    t = tunnel.VM_TUNNELS[name]
    me, peer = ("r1", "r2") if router == "r1" else ("r2", "r1")
    far = topo.node("t2" if me == "r1" else "t1").interfaces[0]
    if t.carried == 6:
        return [_q(["ip", "-6", "route", "replace", tunnel.network(far.ipv6), "via", tunnel.INNER_V6[peer],
                    "dev", tunnel.TUNNEL_DEV, *tunnel.table(scoped)])]
    return [_q(["ip", "route", "replace", tunnel.network(far.ipv4), "dev", tunnel.TUNNEL_DEV, *tunnel.table(scoped)])]
