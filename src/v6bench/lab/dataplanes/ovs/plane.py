"""Open vSwitch as a router, its userspace datapath (``datapath_type=netdev``)
on a namespace router: an ovsdb-server and an ovs-vswitchd of the router's
own (its work directory, its namespace, its DUT CPU), one bridge whose
ports are the router's interfaces (packet sockets), and the OpenFlow tables
of :mod:`.flows` made from the router's kernel routes and addresses.

The kernel keeps the router's addresses, so it answers ARP and ND and
takes frames for the router; its forwarding is off, and an nftables
``netdev`` ingress chain (after the packet sockets' tap) drops the transit
frames the kernel also receives, so that only Open vSwitch forwards them
and the kernel does not spend the DUT CPU on them twice.

Its counts: the packet counts of table 2's two output flows (IPv4, IPv6),
read after the revalidators' next round (``revalidator/wait``: the
datapath flows' statistics reach the OpenFlow flows then), and the
datapath's misses (``dpctl/show``: upcalls, the slow path: the first frame
of each datapath flow, and ARP and ND) as ``slow_path_frames``. Its CPU
time: ovs-vswitchd's lasting threads (:func:`threads`).
"""

from __future__ import annotations

import functools
import ipaddress
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from ....core.errors import LabError
from ..protocol import RouterHost
from . import flows

SCHEMA = Path("/usr/share/openvswitch/vswitch.ovsschema")
TOOLS = ("ovsdb-tool", "ovsdb-server", "ovs-vswitchd", "ovs-vsctl", "ovs-ofctl", "ovs-appctl")
BRIDGE = "br0"
#: The nftables table that keeps transit frames from the kernel's stack (they go to Open vSwitch's sockets first).
NFT_TABLE = "v6b_ovs"


def _paths(work_dir: Path) -> dict[str, str]:
    d = work_dir / "ovs"
    return {"dir": str(d), "db": str(d / "conf.db"), "db_sock": f"unix:{d / 'db.sock'}",
            "db_ctl": str(d / "ovsdb.ctl"), "ctl": str(d / "vswitchd.ctl"), "mgmt": f"unix:{d / (BRIDGE + '.mgmt')}",
            "pid": str(d / "vswitchd.pid")}


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


def threads(pid: int) -> list[dict[str, Any]]:
    """ovs-vswitchd ``pid``'s lasting threads: the main one, which polls the ports and forwards (the userspace
    datapath's non-PMD ports), and its named helpers (handler, revalidator, urcu, …); the unnamed threads it
    starts and ends now and then (tens of µs each) are left out, as their end would leave a trial's CPU time
    unknown."""
    out = []
    for t in sorted(Path(f"/proc/{pid}/task").iterdir(), key=lambda t: int(t.name)):
        try:
            comm = (t / "comm").read_text().strip()
        except OSError:
            continue
        if int(t.name) == pid or comm != "ovs-vswitchd":
            out.append({"name": f"{comm}/{t.name}", "pid": int(t.name)})
    return out


class OvsPlane:
    """Open vSwitch's userspace datapath as the router, on namespace routers."""

    name = "ovs"
    summary = "Open vSwitch's userspace datapath (netdev) as a router"
    router_kinds: tuple[str, ...] = ("ns",)
    carries = frozenset({"scope"})
    keeps_state = False

    def check_machine(self) -> None:
        """Open vSwitch's programs and schema (Debian package openvswitch-switch; ``make setup``)."""
        missing = [t for t in TOOLS if shutil.which(t) is None]
        if missing or not SCHEMA.exists():
            raise LabError(f"the ovs data plane needs {', '.join(missing) or SCHEMA} (Debian package "
                           "openvswitch-switch; `make setup` installs it)")

    def set_up(self, router: RouterHost) -> dict[str, Any]:
        p = _paths(router.work_dir)
        Path(p["dir"]).mkdir(parents=True, exist_ok=True)
        pin = ["taskset", "-a", "-c", str(router.cpu)] if router.cpu is not None else []
        router.command(["ovsdb-tool", "create", p["db"], str(SCHEMA)])
        router.command([*pin, "ovsdb-server", p["db"], f"--remote=p{p['db_sock']}", f"--unixctl={p['db_ctl']}",
                        f"--pidfile={p['dir']}/ovsdb.pid", f"--log-file={p['dir']}/ovsdb.log", "--detach"])
        router.command(["env", f"OVS_RUNDIR={p['dir']}", *pin, "ovs-vswitchd", p["db_sock"], f"--unixctl={p['ctl']}",
                        f"--pidfile={p['pid']}", f"--log-file={p['dir']}/vswitchd.log", "--detach"])
        vsctl = ["ovs-vsctl", f"--db={p['db_sock']}", "--timeout=10"]
        router.command([*vsctl, "--no-wait", "init"])
        add = [*vsctl, "add-br", BRIDGE, "--", "set", "bridge", BRIDGE, "datapath_type=netdev", "fail-mode=secure"]
        ports = {}
        for n, ifname in enumerate(router.interfaces, 1):
            add += ["--", "add-port", BRIDGE, ifname, "--", "set", "interface", ifname, f"ofport_request={n}"]
            ports[ifname] = n
        router.command(add)
        links = json.loads(router.command(["ip", "-j", "addr", "show"]))
        macs = {link["ifname"]: link["address"] for link in links}
        local = {link["ifname"]: [a["local"] for a in link.get("addr_info", []) if a.get("scope") == "global"]
                 for link in links if link["ifname"] in ports}
        routes = [flows.Route(r["dst"], r["dev"], r.get("gateway"))
                  for fam in ("-4", "-6") for r in json.loads(router.command(["ip", "-j", fam, "route", "show"]))
                  if r.get("dev") in ports and r["dst"] != "default" and not r["dst"].startswith("fe80")]
        table = Path(p["dir"]) / "flows"
        table.write_text("\n".join(flows.table(routes, [a for v in local.values() for a in v], ports, macs)) + "\n")
        router.command(["ovs-ofctl", "del-flows", p["mgmt"]])
        router.command(["ovs-ofctl", "add-flows", p["mgmt"], str(table)])
        router.command(["sysctl", "-qw", "net.ipv4.ip_forward=0", "net.ipv6.conf.all.forwarding=0"])
        rules = Path(p["dir"]) / "ingress.nft"
        rules.write_text(ingress_ruleset(local))
        router.command(["nft", "-f", str(rules)])
        return {"ovs": p, "ports": ports, "cpu_threads": threads(int(Path(p["pid"]).read_text().split()[0]))}

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
        return _record()


@functools.cache  # the program does not change under a running command; every trial's record asks
def _record() -> dict[str, Any]:
    r = subprocess.run(["ovs-vswitchd", "--version"], capture_output=True, text=True)
    return {"name": OvsPlane.name, "ovs_vswitchd": r.stdout.splitlines()[0] if r.returncode == 0 and r.stdout else None}


PLANE = OvsPlane()
