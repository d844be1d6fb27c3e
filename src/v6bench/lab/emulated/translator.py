"""Translation on namespace routers (:mod:`v6bench.lab.model.translation`,
:mod:`v6bench.lab.model.xlat`): Debian's TAYGA started in a router's
namespace (R1's NAT64; 464XLAT's CLAT on R1 and PLAT on R2), its tun
device routed, and its state read around each trial.

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
from ..model import translation, xlat
from ..model.cpus import CpuPlan
from ..model.dut import DutConfig
from ..model.site import Site
from ..model.topology import ROUTER, Topology
from ..machine import napi, nsctl

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


def taygas(topo: Topology, dut: DutConfig) -> tuple[translation.Tayga, ...]:
    """The TAYGAs ``dut`` runs on ``topo``'s routers (none without translation)."""
    return xlat.taygas(dut.nat64, dut.xlat, topo)


def start_all(site: Site, topo: Topology, dut: DutConfig, cpu_plan: CpuPlan, only: str | None = None) -> list[dict[str, Any]]:
    """Starts ``dut``'s TAYGAs (on router ``only``, if given), each on its
    router's DUT CPU in the split arrangement; their threads' records
    (:func:`start`)."""
    split = cpu_plan.arrangement == "split"
    routers = [n.name for n in topo.nodes if n.role == ROUTER]
    return [start(site, t, cpu_plan.router_cpu(routers.index(t.router)) if split else None)
            for t in taygas(topo, dut) if only in (None, t.router)]


def start(site: Site, t: translation.Tayga, cpu: int | None) -> dict[str, Any]:
    """Starts TAYGA ``t`` in its router's namespace, on ``cpu`` (the
    router's DUT CPU; None: not pinned), and adds its routes; idempotent
    (a TAYGA already running there is ended first: a hard reset builds the
    namespace anew). Returns its thread's record as the lab keeps its NAPI
    threads' (``LabState.napi``: its CPU time is the DUT's work, sampled
    with theirs)."""
    tayga = binary()
    router = t.router
    ns = site.netns(router)
    d = directory(site, router)
    (d / "data").mkdir(parents=True, exist_ok=True)
    conf = d / "tayga.conf"
    conf.write_text("".join(f"{x}\n" for x in (*t.conf, f"data-dir {d / 'data'}")))
    for pid in _taygas(ns):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    links = nsctl.command(ns, ["ip", "-o", "link", "show"])
    if f": {t.tun}:" not in links:
        nsctl.command(ns, [tayga, "--config", str(conf), "--mktun"])
    pin = ["taskset", "-c", str(cpu)] if cpu is not None else []
    with open(d / "tayga.log", "ab") as log:
        subprocess.Popen(["ip", "netns", "exec", ns, *pin, tayga, "--config", str(conf), "--nodetach"],
                         stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
    nsctl.command(ns, ["ip", "link", "set", t.tun, "up"])
    for args in t.routes:
        nsctl.command(ns, ["ip", *args])
    deadline = time.monotonic() + START_TIMEOUT_S
    while not (pids := _taygas(ns)):
        if time.monotonic() > deadline:
            tail = (d / "tayga.log").read_text(errors="replace").strip().splitlines()[-3:]
            raise LabError(f"{ns}: TAYGA did not start: {' / '.join(tail) or 'no output'}")
        time.sleep(0.05)
    return napi.thread_record(router, ns, THREAD, pids[0], cpu)


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


def state(netns: str, stateful: bool) -> dict[str, Any]:
    """What a translator holds now: whether TAYGA runs, and if it keeps
    state the router's connection-tracking entries and the source NAT
    rule's matches so far (a NAT rule sees a connection's first packet
    only: one match a connection opened)."""
    out: dict[str, Any] = {"running": bool(_taygas(netns))}
    if stateful:
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
