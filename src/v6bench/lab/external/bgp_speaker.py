"""A BGP speaker on the tester's side that tells an external lab's DUT a
forwarding table like the Internet's, the way hardware testers load a
router (RFC 3222 §3.3: the FIB learning time starts with the announcement).

The speaker is Debian's BIRD 2 (``bird2``), run by v6bench in a network
namespace of its own (``site.netns("bgp")``), on a macvlan of t2's
interface, the one interface of the lab file that faces the table's next
hop: it gets its own MAC and the file's ``[table] speaker_ipv4`` and
``speaker_ipv6`` (t2's address + 1 by default), and holds one eBGP session
a family with the DUT's ``peer_ipv4``/``peer_ipv6`` (t2's gateways by
default), ASes ``local_as`` and ``peer_as``, hold time ``hold_time_s``.
It announces every prefix of the table (:mod:`v6bench.fib`) with t2's own
address (the engine's) as next hop (``next hop keep``), so the DUT
forwards the table's traffic to t2, and takes nothing from the DUT
(``import none``). Its configuration has no kernel protocol: it changes
no forwarding table of this machine.

Safety (docs/external-lab.md): nothing is announced unless the lab file
says ``allow_full_table = true``; the speaker talks only to the declared
peer addresses, on the declared interface, from a namespace v6bench
created and has no route beyond t2's link. The engine's AF_XDP receive
program passes frames for the speaker's MAC to the kernel
(engine/src/bpf.rs), so the sessions live through trials.

Life cycle: :func:`start` when an external lab is taken into use with a
table (lab/interface.py), :func:`stop` when it is released, also on error
or Ctrl-C; BIRD withdraws the routes as it stops (a BGP Cease). The
namespace carries v6bench's prefix, so a crash leaves nothing that the
next start, or ``v6bench lab down``, does not remove (lab/emulated/build.destroy
kills what runs in v6bench's namespaces).
"""

from __future__ import annotations

from typing import Any, ContextManager

import ipaddress
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from pyroute2 import IPRoute, NetlinkError
from pyroute2 import netns as pr_netns
from pyroute2.netlink.rtnl.ifaddrmsg import IFA_F_NODAD

from ...core.errors import LabError
from ...fib import prefix_list
from ...fib.generate import Table
from ..machine import lock, nsctl, table_files
from ..model.dut import DutConfig
from .lab_file import ExternalSpec
from ..model.site import Site
from .snmp import Poller
from .snmp_observe import SnmpObserver

#: The speaker's node name: its namespace is ``site.netns(NODE)``.
NODE = "bgp"
#: The macvlan of t2's interface, in the speaker's namespace.
IFNAME = "v6bgp0"
#: The BGP sessions by IP version, as the speaker's configuration names them.
SESSIONS = {4: "dut4", 6: "dut6"}
#: How often the sessions' state is read while waiting, s.
POLL_S = 0.2
#: How long BIRD may take to stop and withdraw its routes, s.
STOP_TIMEOUT_S = 10


@dataclass(frozen=True)
class Speaker:
    """A running speaker: its namespace, its files' directory, its control socket."""

    netns: str
    directory: Path

    @property
    def socket(self) -> Path:
        return self.directory / "bird.ctl"

    @property
    def pid_file(self) -> Path:
        return self.directory / "bird.pid"


def directory(site: Site) -> Path:
    return site.run_dir / "bgp"


def route_file(site: Site, name: str, seed: int, version: int, next_hop: str, table: Table | None = None) -> Path:
    """BIRD ``route`` lines of the table's family ``version``, all via
    ``next_hop``: written once per run directory beside the table;
    ``table``: the table already read, so it is not read again."""
    tag = re.sub(r"[^0-9a-f]", "-", next_hop.lower())
    path = site.run_dir / "tables" / f"{name}-seed{seed}-bgp{version}-{tag}.conf"
    if not path.exists():
        table = table or prefix_list.read(table_files.table_file(site, name, seed))
        routes = (table.ipv4 if version == 4 else table.ipv6).routes
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text("".join(f"route {ipaddress.ip_address(n)}/{length} via {next_hop};\n" for n, length in routes))
        tmp.replace(path)
    return path


def config(spec: ExternalSpec, routes: dict[int, Path], log: Path) -> str:
    """The speaker's BIRD configuration: a static protocol a family with
    the table's routes, one eBGP session a family to the DUT."""
    t = spec.table
    assert t is not None
    me = {4: t.speaker_ipv4.split("/")[0], 6: t.speaker_ipv6.split("/")[0]}
    peer = {4: t.peer_ipv4, 6: t.peer_ipv6}
    lines = [f'log "{log}" all;', f"router id {me[4]};", "protocol device {}"]
    for v in (4, 6):
        # BIRD's include must start a line of its own.
        lines += [f"protocol static table{v} {{", f"  ipv{v};", f'include "{routes[v]}";', "}"]
        lines += [f"protocol bgp {SESSIONS[v]} {{",
                  f"  local {me[v]} as {t.local_as};",
                  f"  neighbor {peer[v]} as {t.peer_as};",
                  f"  hold time {t.hold_time_s};",
                  "  connect delay time 1;", "  connect retry time 5;", "  error wait time 1, 10;",
                  f"  ipv{v} {{ import none; export all; next hop keep; }};",
                  "}"]
    return "\n".join(lines) + "\n"


def binaries() -> tuple[str, str]:
    bird, birdc = shutil.which("bird"), shutil.which("birdc")
    if not bird or not birdc:
        raise LabError("a table for an external lab's DUT is announced by BIRD 2, which is not installed: "
                       "apt-get install bird2 (make setup installs it)")
    return bird, birdc


def remove(site: Site) -> bool:
    """Stops the speaker (BIRD withdraws its routes) and removes its
    namespace, the macvlan with it; True if there was one."""
    ns = site.netns(NODE)
    if not os.path.exists(f"/run/netns/{ns}"):
        return False
    try:
        nsctl.remove(ns, STOP_TIMEOUT_S)
    except OSError as e:
        raise LabError(f"cannot remove the BGP speaker's namespace {ns}: {e}") from e
    return True


def start(site: Site, spec: ExternalSpec, dut: DutConfig) -> tuple[Speaker, dict[str, Any]]:
    """Starts the speaker for table ``dut.table`` (a leftover one removed
    first); returns it and the lab's table record (lab/emulated/fib_load.py's shape:
    the DUT's FIB learning time is measured by frames afterwards,
    trial/fib_learning.py)."""
    bird, _ = binaries()
    t, t2 = spec.table, spec.port("t2")
    assert t is not None
    if remove(site):
        lock.warn(f"removed a BGP speaker a crashed run left ({site.netns(NODE)})")
    table = prefix_list.read(table_files.table_file(site, dut.table, dut.table_seed))
    table_files.destinations(site, dut.table, dut.table_seed, dut.destinations, table)
    next_hop = {4: t2.ipv4.split("/")[0], 6: t2.ipv6.split("/")[0]}
    routes = {v: route_file(site, dut.table, dut.table_seed, v, next_hop[v], table) for v in (4, 6)}
    d = directory(site)
    d.mkdir(parents=True, exist_ok=True)
    speaker = Speaker(site.netns(NODE), d)
    for f in (speaker.socket, speaker.pid_file, d / "bird.log"):
        f.unlink(missing_ok=True)
    (d / "bird.conf").write_text(config(spec, routes, d / "bird.log"))
    ns = speaker.netns
    try:
        _station(ns, t2.netns, t2.interface, (t.speaker_ipv4, t.speaker_ipv6))
        started = time.time_ns()
        p = subprocess.run(["ip", "netns", "exec", ns, bird, "-c", str(d / "bird.conf"), "-s", str(speaker.socket),
                            "-P", str(speaker.pid_file)], capture_output=True, text=True, timeout=120)
        if p.returncode != 0:
            raise LabError(f"BIRD did not start: {(p.stderr or p.stdout).strip()[-500:]}")
    except BaseException:
        remove(site)
        raise
    record: dict[str, Any] = {"table": dut.table, "seed": dut.table_seed, "source": table.source, "destinations": dut.destinations,
              "destinations_file": str(table_files.destinations_file(site, dut.table, dut.table_seed, dut.destinations)),
              "learning_checked_by": "probe trials walking the sampled destinations until none is lost "
                                     "(trial/fib_learning.py)",
              "announced_by": {"speaker": "BIRD 2 (bird2), eBGP", **t.to_json(), "interface": t2.interface,
                               "next_hop": {f"ipv{v}": next_hop[v] for v in (4, 6)}},
              "announce_started_unix_ns": started,
              "routers": {spec.dut.name: {"ipv4_routes": len(table.ipv4), "ipv6_routes": len(table.ipv6),
                                          "load_s": None, "fib_learning_s": None, "slab_kib": None,
                                          "routes_counted_by": "announced (the DUT's own count is not read)",
                                          "next_hop": {"dev": f"{spec.dut.name} toward {t2.interface}",
                                                       **{f"ipv{v}": next_hop[v] for v in (4, 6)}}}}}
    try:
        sent_s = wait_sent(speaker, spec, {4: len(table.ipv4), 6: len(table.ipv6)}, started)
    except BaseException:
        remove(site)
        raise
    record["routers"][spec.dut.name]["load_s"] = sent_s
    return speaker, record


def sessions(speaker: Speaker) -> dict[int, dict[str, Any]]:
    """Each session's state (``Established``, ``Active`` …), BIRD's note on
    it (the last error) and the routes it has exported, by IP version."""
    _, birdc = binaries()
    out = {}
    for v, name in SESSIONS.items():
        p = subprocess.run(["ip", "netns", "exec", speaker.netns, birdc, "-s", str(speaker.socket), "show",
                            "protocols", "all", name], capture_output=True, text=True, timeout=30)
        out[v] = parse_protocol(p.stdout or p.stderr, name)
    return out


def parse_protocol(text: str, name: str) -> dict[str, Any]:
    """BIRD 2's ``show protocols all NAME`` of a BGP session: its ``state``,
    the routes it has ``exported`` and a ``note`` (the last error, or the
    state's info)."""
    state = re.search(r"BGP state:\s+(\S+)", text)
    info = re.search(rf"^{name}\s+BGP\s+\S+\s+\S+\s+\S+\s+(.*)$", text, re.M)
    exported = re.search(r"Routes:\s+\d+ imported, (\d+) exported", text)
    error = re.search(r"Last error:\s+(.*)", text)
    return {"state": state.group(1) if state else "unknown", "exported": int(exported.group(1)) if exported else 0,
            "note": (error.group(1) if error else (info.group(1) if info else text.strip()[-200:])).strip()}


def wait_sent(speaker: Speaker, spec: ExternalSpec, want: dict[int, int], started_ns: int) -> float:
    """Waits until both sessions are established and have exported the
    whole table; the time from the start [s]. Raises :class:`LabError`
    after ``learning_timeout_s``, with what BIRD says of each session."""
    timeout_s = spec.table.learning_timeout_s if spec.table else 600
    while True:
        s = sessions(speaker)
        if all(s[v]["state"] == "Established" and s[v]["exported"] >= want[v] for v in (4, 6)):
            return round((time.time_ns() - started_ns) / 1e9, 3)
        if (time.time_ns() - started_ns) / 1e9 > timeout_s:
            t = spec.table
            assert t is not None, "a speaker runs only where the file allows a table"
            raise LabError(f"{spec.path}: the BGP sessions to the DUT did not carry the table within {timeout_s:g} s: "
                           + "; ".join(f"IPv{v} {t.speaker_ipv4 if v == 4 else t.speaker_ipv6} → "
                                       f"{t.peer_ipv4 if v == 4 else t.peer_ipv6} (AS {t.peer_as}): {s[v]['state']}, "
                                       f"{s[v]['exported']:,} of {want[v]:,} routes sent, {s[v]['note']}"
                                       for v in (4, 6))
                           + f" (the speaker's log: {speaker.directory / 'bird.log'})")
        time.sleep(POLL_S)


def check_up(speaker: Speaker, spec: ExternalSpec) -> None:
    """Raises :class:`LabError` unless both sessions are still established:
    a DUT that dropped one has withdrawn its routes, and its trials would
    measure that, not the table."""
    s = sessions(speaker)
    down = [f"IPv{v}: {s[v]['state']}, {s[v]['note']}" for v in (4, 6) if s[v]["state"] != "Established"]
    if down:
        raise LabError(f"{spec.path}: a BGP session to the DUT went down, so the DUT no longer holds the table: "
                       + "; ".join(down))


class Watched:
    """An observer (lab/protocol.Observer) that also checks, after each
    trial, that the speaker's sessions are still up (:func:`check_up`)."""

    def __init__(self, inner: SnmpObserver, speaker: Speaker, spec: ExternalSpec) -> None:
        self.inner, self.speaker, self.spec = inner, speaker, spec

    def before(self) -> dict[str, Any] | None:
        return self.inner.before()

    def during(self, limit_s: float, traffic_s: float | None = None) -> ContextManager[Poller | None]:
        return self.inner.during(limit_s, traffic_s)

    def after(self, before: dict[str, Any] | None, during: Poller | None, eng: dict[str, Any]) -> dict[str, Any]:
        out = self.inner.after(before, during, eng)
        check_up(self.speaker, self.spec)
        return out

    def reasons(self, eng: dict[str, Any], observed: dict[str, Any], reset_router: str | None) -> list[str]:
        return self.inner.reasons(eng, observed, reset_router)


def _station(ns: str, port_netns: str | None, port: str, addresses: tuple[str, ...]) -> None:
    """Namespace ``ns`` with a macvlan (bridge mode) of tester port
    ``port`` (in ``port_netns``, or this machine's own namespace) holding
    ``addresses`` (IPv6 without duplicate address detection), router
    advertisements ignored: another station on t2's link."""
    try:
        pr_netns.create(ns)
        with IPRoute(netns=ns) as ipr:
            ipr.link("set", index=ipr.link_lookup(ifname="lo")[0], state="up")
        with (IPRoute(netns=port_netns) if port_netns else IPRoute()) as ipr:
            (parent,) = ipr.link_lookup(ifname=port)
            ipr.link("add", ifname=IFNAME, kind="macvlan", link=parent, macvlan_mode="bridge")
            ipr.link("set", index=ipr.link_lookup(ifname=IFNAME)[0], net_ns_fd=ns)
        nsctl.run_in(ns, _refuse_router_advertisements)
        with IPRoute(netns=ns) as ipr:
            (index,) = ipr.link_lookup(ifname=IFNAME)
            for a in map(ipaddress.ip_interface, addresses):
                ipr.addr("add", index=index, address=str(a.ip), prefixlen=a.network.prefixlen,
                         **({"flags": IFA_F_NODAD} if a.version == 6 else {}))
            ipr.link("set", index=index, state="up")
    except (OSError, NetlinkError, ValueError) as e:
        raise LabError(f"the BGP speaker's station on {port}: {e}") from e


def describe(spec: ExternalSpec) -> str:
    """What the DUT is told, for ``lab check`` and the docs."""
    t, t2 = spec.table, spec.port("t2")
    if t is None:
        return ("no table: the file does not allow one ([table] allow_full_table = true), so --table is refused "
                "on this lab")
    return (f"with a table (--table, [dut] table), a BGP speaker (BIRD) on a macvlan of {t2.interface} at "
            f"{t.speaker_ipv4} and {t.speaker_ipv6}, AS {t.local_as}, tells the DUT at {t.peer_ipv4} and "
            f"{t.peer_ipv6}, AS {t.peer_as} (eBGP, hold time {t.hold_time_s} s), a route to every prefix of the "
            f"table (for the internet table about 1 M IPv4 and 230 k IPv6 prefixes, much of the address space), "
            f"each with next hop t2 ({t2.ipv4.split('/')[0]}, {t2.ipv6.split('/')[0]}); the routes are withdrawn "
            f"when the test ends")


def _refuse_router_advertisements() -> None:
    """In the speaker's namespace: no address or route from the DUT's router advertisements."""
    for key in ("net.ipv6.conf.all.accept_ra", "net.ipv6.conf.default.accept_ra"):
        nsctl.sysctl(key, 0)
