"""Open vSwitch as a router: its userspace datapath
(``datapath_type=netdev``, ``data_plane = "ovs"``) on a namespace router,
its kernel datapath (``system``, the ``openvswitch`` module;
``data_plane = "ovs-kernel"``) in a VM router's guest. An ovsdb-server and
an ovs-vswitchd of the router's own (its run directory, its namespace or
guest, its DUT CPU in a namespace), one bridge whose ports are the
router's interfaces, and the OpenFlow tables of :mod:`.flows` made from
the router's kernel routes and addresses.

The kernel keeps the router's addresses, so it answers ARP and ND and
takes frames for the router; its forwarding is off. The userspace
datapath's ports are packet sockets, beside which the kernel receives
every frame: an nftables ``netdev`` ingress chain (after the sockets' tap)
drops the transit frames, so that only Open vSwitch forwards them and the
kernel does not spend the DUT CPU on them twice. The kernel datapath takes
its ports' frames before the kernel's stack: each port's addresses move to
an internal port of the bridge with its MAC, and the flows hand the kernel
ARP, ND and its own frames there (:mod:`.flows`).

Its counts: the packet counts of table 2's two output flows (IPv4, IPv6),
read after the revalidators' next round (``revalidator/wait``: the
datapath flows' statistics reach the OpenFlow flows then), and the
datapath's misses (``dpctl/show``: upcalls, the slow path: the first frame
of each datapath flow, and ARP and ND) as ``slow_path_frames``. Its CPU
time on a namespace router: ovs-vswitchd's lasting threads
(:func:`threads`); in a VM, the VM's.
"""

from __future__ import annotations

import functools
import ipaddress
import json
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

from ....core.errors import LabError
from ..protocol import RouterHost, place_text
from . import flows

SCHEMA = Path("/usr/share/openvswitch/vswitch.ovsschema")
TOOLS = ("ovsdb-tool", "ovsdb-server", "ovs-vswitchd", "ovs-vsctl", "ovs-ofctl", "ovs-appctl")
BRIDGE = "br0"
#: How long after its system's boot ovs-vswitchd may start [s]: Open vSwitch 3.1 counts the CPUs it may use
#: for its upcall handlers (one a CPU, the kernel datapath's per-CPU dispatch) from a count it refreshes every
#: 10 s of the monotonic clock, 0 before the first refresh; a vswitchd that made its bridge earlier than 10 s
#: after the guest's boot had 0 handlers, then 1, and every upcall was lost (lookups "missed:75 lost:75"; no ARP
#: answered): 1 of 8 VM labs, when it started 8.8 s after the boot, none of 6 started at 9.3-11.2 s
#: (EPYC-25-1, TCG, 2026-12-03). A VM router boots in 7-12 s; a namespace router's system has long run.
START_AFTER_BOOT_S = 12.0
#: The nftables table that keeps transit frames from the kernel's stack (they go to Open vSwitch's sockets first).
NFT_TABLE = "v6b_ovs"


def _paths(run_dir: str) -> dict[str, str]:
    d = f"{run_dir}/ovs"
    return {"dir": d, "db": f"{d}/conf.db", "db_sock": f"unix:{d}/db.sock", "db_ctl": f"{d}/ovsdb.ctl",
            "ctl": f"{d}/vswitchd.ctl", "mgmt": f"unix:{d}/{BRIDGE}.mgmt", "pid": f"{d}/vswitchd.pid"}


def ingress_ruleset(local: dict[str, list[str]]) -> str:
    """The ``netdev`` chains that drop, on each interface (``local``: its
    addresses), IPv4 and IPv6 frames not for the router (link-local and
    multicast IPv6, ND among it, go on)."""
    chains = []
    for i, (dev, addrs) in enumerate(sorted(local.items())):
        v4 = [a for a in addrs if ipaddress.ip_address(a).version == 4]
        v6 = [a for a in addrs if ipaddress.ip_address(a).version == 6] + ["fe80::/10", "ff00::/8"]
        rules = ([f"ip daddr != {{ {', '.join(v4)} }} drop"] if v4 else ["meta protocol ip drop"])
        rules.append(f"ip6 daddr != {{ {', '.join(v6)} }} drop")
        chains.append(f"  chain in{i} {{\n    type filter hook ingress device \"{dev}\" priority 0;\n"
                      + "".join(f"    {r}\n" for r in rules) + "  }\n")
    return f"table netdev {NFT_TABLE} {{\n" + "".join(chains) + "}\n"


def n_packets(dump: str, match: str) -> int:
    """The packet count, in ``ovs-ofctl dump-flows``'s output ``dump``, of the flow whose match is ``match``
    (:data:`.flows.OUT_IPV4`: its fields in any order, ``table=`` aside)."""
    want = {f for f in match.split(",") if not f.startswith("table=")}
    for line in dump.splitlines():
        m = re.search(r"n_packets=(\d+),.*?\s(priority=\S+)\s+actions=", line)
        if m and set(m.group(2).split(",")) == want:
            return int(m.group(1))
    raise LabError(f"Open vSwitch: no flow {match} in its table 2")


def threads(router: RouterHost, pid: int) -> list[dict[str, Any]]:
    """ovs-vswitchd ``pid``'s lasting threads in ``router``: the main one, which polls the ports and forwards
    (the userspace datapath's non-PMD ports), and its named helpers (handler, revalidator, urcu, …); the
    unnamed threads it starts and ends now and then (tens of µs each) are left out, as their end would leave a
    trial's CPU time unknown."""
    listing = router.command(["sh", "-c", f'for t in /proc/{pid}/task/*; do echo "${{t##*/}} $(cat $t/comm)"; done'])
    out = []
    for line in sorted(listing.splitlines(), key=lambda x: int(x.split()[0]) if x.split() else 0):
        tid, _, comm = line.strip().partition(" ")
        if tid.isdigit() and (int(tid) == pid or comm != "ovs-vswitchd"):
            out.append({"name": f"{comm}/{tid}", "pid": int(tid)})
    return out


def kernel_port(dev: str) -> str:
    """The internal port that holds device ``dev``'s addresses (the kernel datapath)."""
    return f"{dev}-k"


class OvsPlane:
    """Open vSwitch as the router, with the ``datapath`` (``netdev``: userspace, ``system``: the kernel's)."""

    carries = frozenset({"scope"})
    #: Its datapath caches flows (megaflows): a flow's first frame is an upcall to ovs-vswitchd, which under a VM's
    #: TCG took some 0.27 s to cache it, 1,350 of a trial's 10,000 frames taking the slow path, delayed by
    #: milliseconds (EPYC-25-1); the next trial none. So RFC 4814 ports' flows are opened first, as through a
    #: DUT that tracks connections (trial/preliminary.py), and a trial measures forwarding through the cache.
    keeps_state = True

    def __init__(self, name: str, datapath: str, summary: str, router_kinds: tuple[str, ...]) -> None:
        self.name, self.datapath, self.summary, self.router_kinds = name, datapath, summary, router_kinds
        #: The kernel datapath's module (VM routers only: this machine's kernel has none).
        self.guest_modules: tuple[str, ...] = ("openvswitch",) if datapath == "system" else ()

    def check_machine(self) -> None:
        """Open vSwitch's programs and schema (Debian package openvswitch-switch; ``make setup``)."""
        missing = [t for t in TOOLS if shutil.which(t) is None]
        if missing or not SCHEMA.exists():
            raise LabError(f"the {self.name} data plane needs {', '.join(missing) or SCHEMA} (Debian package "
                           "openvswitch-switch; `make setup` installs it)")

    def set_up(self, router: RouterHost) -> dict[str, Any]:
        p = _paths(router.run_dir)
        for module in self.guest_modules:
            router.command(["modprobe", module])
        router.work_dir.mkdir(parents=True, exist_ok=True)
        router.command(["mkdir", "-p", p["dir"]])
        pin = ["taskset", "-a", "-c", str(router.cpu)] if router.cpu is not None else []
        env = ["env", f"OVS_RUNDIR={p['dir']}", f"OVS_DBDIR={p['dir']}", f"OVS_LOGDIR={p['dir']}"]
        router.command(["ovsdb-tool", "create", p["db"], router.place("vswitch.ovsschema", SCHEMA)])
        _wait_after_boot(router)
        router.command([*env, *pin, "ovsdb-server", p["db"], f"--remote=p{p['db_sock']}", f"--unixctl={p['db_ctl']}",
                        f"--pidfile={p['dir']}/ovsdb.pid", f"--log-file={p['dir']}/ovsdb.log", "--detach"])
        router.command([*env, *pin, "ovs-vswitchd", p["db_sock"], f"--unixctl={p['ctl']}",
                        f"--pidfile={p['pid']}", f"--log-file={p['dir']}/vswitchd.log", "--detach"])
        vsctl = [*env, "ovs-vsctl", f"--db={p['db_sock']}", "--timeout=10"]
        router.command([*vsctl, "--no-wait", "init"])
        add = [*vsctl, "add-br", BRIDGE, "--", "set", "bridge", BRIDGE, f"datapath_type={self.datapath}",
               "fail-mode=secure"]
        ports = {}
        for n, ifname in enumerate(router.interfaces, 1):
            add += ["--", "add-port", BRIDGE, ifname, "--", "set", "interface", ifname, f"ofport_request={n}"]
            ports[ifname] = n
        kernel_ports = {dev: 100 + n for dev, n in ports.items()} if self.datapath == "system" else None
        for dev, n in (kernel_ports or {}).items():
            k = kernel_port(dev)
            add += ["--", "add-port", BRIDGE, k, "--", "set", "interface", k, "type=internal", f"ofport_request={n}"]
        links = json.loads(router.command(["ip", "-j", "addr", "show"]))
        macs = {link["ifname"]: link["address"] for link in links}
        local = {link["ifname"]: [a for a in link.get("addr_info", []) if a.get("scope") == "global"]
                 for link in links if link["ifname"] in ports}
        shown = [r for fam in ("-4", "-6") for r in json.loads(router.command(["ip", "-j", fam, "route", "show"]))]
        routes = [flows.Route(r["dst"], r["dev"], r.get("gateway")) for r in shown
                  if r.get("dev") in ports and r["dst"] != "default" and not r["dst"].startswith("fe80")]
        router.command(add)
        if kernel_ports is not None:
            _move_addresses(router, local, routes, {link["ifname"]: link["mtu"] for link in links}, macs)
        addresses = [a["local"] for v in local.values() for a in v]
        table = "\n".join(flows.table(routes, addresses, ports, macs, kernel_ports)) + "\n"
        router.command(["ovs-ofctl", "del-flows", p["mgmt"]])
        router.command(["ovs-ofctl", "add-flows", p["mgmt"], place_text(router, "ovs-flows", table)])
        router.command(["sysctl", "-qw", "net.ipv4.ip_forward=0", "net.ipv6.conf.all.forwarding=0"])
        if kernel_ports is None:
            rules = ingress_ruleset({dev: [a["local"] for a in v] for dev, v in local.items()})
            router.command(["nft", "-f", place_text(router, "ovs-ingress.nft", rules)])
        pid = int(router.command(["cat", p["pid"]]).split()[0])
        return {"ovs": p, "ports": ports, "datapath": self.datapath, "cpu_threads": threads(router, pid)}

    def counts(self, router: RouterHost, setup: dict[str, Any]) -> dict[str, int]:
        p = setup["ovs"]
        router.command(["ovs-appctl", "-t", p["ctl"], "revalidator/wait"])
        dump = router.command(["ovs-ofctl", "dump-flows", p["mgmt"], "table=2"])
        shown = router.command(["ovs-appctl", "-t", p["ctl"], "dpctl/show"])
        missed = re.search(r"missed:(\d+)", shown)
        if missed is None:
            raise LabError(f"{router.name}: Open vSwitch's dpctl/show gave no misses: {shown.strip()[:200]}")
        return {"forwarded_ipv4_frames": n_packets(dump, flows.OUT_IPV4),
                "forwarded_ipv6_frames": n_packets(dump, flows.OUT_IPV6), "slow_path_frames": int(missed.group(1))}

    def record(self) -> dict[str, Any]:
        return {**_record(), "name": self.name, "datapath": self.datapath}


def _wait_after_boot(router: RouterHost) -> None:
    """Returns when the router's system has run :data:`START_AFTER_BOOT_S` since its boot."""
    up_s = float(router.command(["cat", "/proc/uptime"]).split()[0])
    if up_s < START_AFTER_BOOT_S:
        time.sleep(START_AFTER_BOOT_S - up_s)


def _move_addresses(router: RouterHost, local: dict[str, list[dict[str, Any]]], routes: list[flows.Route],
                    mtus: dict[str, int], macs: dict[str, str]) -> None:
    """Each port's addresses, and the routes through it, onto its internal port (:func:`kernel_port`) with its
    MAC and MTU; IPv6 off on the port itself, which only the bridge uses."""
    for dev, addrs in local.items():
        k = kernel_port(dev)
        router.command(["ip", "link", "set", "dev", k, "address", macs[dev], "mtu", str(mtus[dev]), "up"])
        for a in addrs:
            router.command(["ip", "addr", "del", f"{a['local']}/{a['prefixlen']}", "dev", dev])
            router.command(["ip", "addr", "add", f"{a['local']}/{a['prefixlen']}", "dev", k,
                            *(["nodad"] if ":" in a["local"] else [])])
        router.command(["sysctl", "-qw", f"net.ipv6.conf.{dev}.disable_ipv6=1"])
    for r in routes:
        if r.gateway:
            router.command(["ip", "route", "replace", r.dst, "via", r.gateway, "dev", kernel_port(r.dev)])


@functools.cache  # the program does not change under a running command; every trial's record asks
def _record() -> dict[str, Any]:
    r = subprocess.run(["ovs-vswitchd", "--version"], capture_output=True, text=True)
    return {"ovs_vswitchd": r.stdout.splitlines()[0] if r.returncode == 0 and r.stdout else None}


PLANE = OvsPlane("ovs", "netdev", "Open vSwitch's userspace datapath (netdev) as a router", ("ns",))
KERNEL_PLANE = OvsPlane("ovs-kernel", "system", "Open vSwitch's kernel datapath as a router", ("vm",))
