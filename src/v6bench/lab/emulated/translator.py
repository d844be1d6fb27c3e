"""NAT64 on a namespace router (:mod:`v6bench.lab.model.translation`):
Debian's TAYGA started in R1's namespace, its tun device routed, and its
state read around each trial.

TAYGA runs as a process in the router's namespace (``--nodetach``, its
own session, output to a log in the lab's directory), so removing the
namespace ends it like every process there (``nsctl.remove``), whatever
ended v6bench: ``lab down``, a temporary lab's end, a crash cleaned up by
the next command. The tun device goes with the namespace.
"""

from __future__ import annotations

from typing import Any

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

from ...core.errors import LabError
from ..model import translation
from ..model.site import Site
from ..model.topology import Topology
from ..machine import nsctl

#: Longest wait for TAYGA's process after its start [s].
START_TIMEOUT_S = 5.0
#: The name TAYGA's thread has among the lab's kernel threads (``LabState.napi``).
THREAD = "tayga"


def binary() -> str:
    """TAYGA's path; a clear error if it is not installed."""
    path = shutil.which("tayga") or ("/usr/sbin/tayga" if Path("/usr/sbin/tayga").exists() else None)
    if not path:
        raise LabError("nat64 on namespace routers needs TAYGA: apt-get install tayga (make setup installs it)")
    return path


def directory(site: Site, router: str) -> Path:
    return site.lab_dir / f"tayga-{router}"


def start(site: Site, topo: Topology, mode: str, cpu: int | None, router: str = "r1") -> dict[str, Any]:
    """Starts TAYGA in ``router``'s namespace for ``mode``, on ``cpu`` (the
    router's DUT CPU; None: not pinned), and routes the NAT64 prefix and
    its IPv4 side into it; idempotent (a TAYGA already running there is
    ended first: a hard reset builds the namespace anew). Returns its
    thread's record as the lab keeps its NAPI threads' (``LabState.napi``:
    its CPU time is the DUT's work, sampled with theirs)."""
    tayga = binary()
    ns = site.netns(router)
    d = directory(site, router)
    (d / "data").mkdir(parents=True, exist_ok=True)
    (t1,) = topo.node("t1").interfaces
    conf = d / "tayga.conf"
    conf.write_text(translation.tayga_conf(mode, t1.ipv6.split("/")[0], str(d / "data")))
    for pid in _taygas(ns):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    links = nsctl.command(ns, ["ip", "-o", "link", "show"])
    if f": {translation.TUN_DEV}:" not in links:
        nsctl.command(ns, [tayga, "--config", str(conf), "--mktun"])
    pin = ["taskset", "-c", str(cpu)] if cpu is not None else []
    with open(d / "tayga.log", "ab") as log:
        subprocess.Popen(["ip", "netns", "exec", ns, *pin, tayga, "--config", str(conf), "--nodetach"],
                         stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
    nsctl.command(ns, ["ip", "link", "set", translation.TUN_DEV, "up"])
    for args in translation.routes(mode):
        nsctl.command(ns, ["ip", *args])
    deadline = time.monotonic() + START_TIMEOUT_S
    while not (pids := _taygas(ns)):
        if time.monotonic() > deadline:
            tail = (d / "tayga.log").read_text(errors="replace").strip().splitlines()[-3:]
            raise LabError(f"{ns}: TAYGA did not start: {' / '.join(tail) or 'no output'}")
        time.sleep(0.05)
    return {"node": router, "netns": ns, "ifname": THREAD, "pid": pids[0], "cpu": cpu, "policy": "other", "priority": 0}


def _taygas(ns: str) -> list[int]:
    """TAYGA processes in namespace ``ns``."""
    out = []
    for pid in nsctl.processes_in(ns):
        try:
            if Path(f"/proc/{pid}/comm").read_text().strip() == "tayga":
                out.append(pid)
        except OSError:
            continue
    return out


def running(site: Site, router: str = "r1") -> bool:
    return bool(_taygas(site.netns(router)))


def state(netns: str, mode: str) -> dict[str, Any]:
    """What the translator holds now: whether TAYGA runs, and in the
    stateful mode the router's connection-tracking entries and the source
    NAT rule's matches so far (a NAT rule sees a connection's first packet
    only: one match a connection opened)."""
    out: dict[str, Any] = {"running": bool(_taygas(netns))}
    if mode == "stateful":
        out["sessions"] = int(nsctl.command(netns, ["cat", "/proc/sys/net/netfilter/nf_conntrack_count"]).strip())
        out["nat_matches"] = _nat_matches(netns)
    return out


def _nat_matches(netns: str) -> int | None:
    try:
        doc = json.loads(nsctl.command(netns, ["nft", "-j", "list", "table", "ip", translation.NAT64_TABLE]))
    except LabError:
        return None
    for item in doc.get("nftables", []):
        for e in (item.get("rule") or {}).get("expr", []):
            if "counter" in e:
                return int(e["counter"]["packets"])
    return None
