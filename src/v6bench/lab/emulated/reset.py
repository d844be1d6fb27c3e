"""Resetting an emulated router during a trial (RFC 2544 §26.6).

- ``soft``: the router's interfaces go down and up again, as after
  ``shutdown`` / ``no shutdown`` on every port. The addresses stay (for
  IPv6 by ``keep_addr_on_down``, a router sysctl), and with them the
  connected routes; static routes, which the kernel drops with the link,
  are restored once the links are up.
- ``hard``: the router's namespace is torn down and built again: its
  interfaces are parked in a holding namespace, the router's namespace is
  deleted (with its neighbour caches, routes, sysctls and nftables), a new
  one is created with the sysctls, the interfaces come back and up, the
  DUT's rule set is loaded, then addresses and routes, as after a reboot
  with the cables left plugged in (the veth ends, so the tester keeps its
  ports).

The kernel ends an interface's NAPI thread when the interface goes down
and starts a new one when it comes up again (still threaded); the new
threads are recognised against those that existed before the interfaces
came up, pinned again, and the lab state is saved with their PIDs (so the
DUT's CPU time is measured in later trials). Returns the new state and
the timing.
"""

from __future__ import annotations

from typing import Any

import dataclasses
import os
import time

from pyroute2 import IPRoute, NetlinkError
from pyroute2 import netns as pr_netns
from pyroute2.netlink.rtnl.ndmsg import NUD_FAILED, NUD_INCOMPLETE

from ...core.errors import LabError
from ...core.tester import RESET_KINDS as KINDS
from . import build, fib_load, rps, translator, tunnel_setup
from ..machine import napi, nsctl
from ..model.site import Site
from .state import LabState, save
from ..model.topology import Node, Topology, parse_topology



def _links_down(site: Site, node: Node) -> None:
    with IPRoute(netns=site.netns(node.name)) as ipr:
        for i in node.interfaces:
            ipr.link("set", index=ipr.link_lookup(ifname=i.name)[0], state="down")


def _forget_unresolved(netns: str) -> None:
    """Drops neighbour entries still being resolved. A veth reports carrier
    a moment before it can transmit, and a router that forwards at once (a
    soft reset keeps its addresses and routes) may send its first ARP/ND
    solicitation into that moment; the kernel would then wait its 1-s
    retransmit timer before asking again. Dropping the entry makes the next
    frame ask at once, as a router whose port is really up would."""
    with IPRoute(netns=netns) as ipr:
        for n in ipr.get_neighbours():
            if n["state"] & (NUD_INCOMPLETE | NUD_FAILED):
                try:
                    ipr.neigh("del", dst=n.get_attr("NDA_DST"), ifindex=n["ifindex"])
                except NetlinkError:  # resolved or gone meanwhile
                    pass


def _move(from_ns: str, to_ns: str, names: list[str]) -> None:
    with IPRoute(netns=from_ns) as ipr:
        for name in names:
            ipr.link("set", index=ipr.link_lookup(ifname=name)[0], net_ns_fd=to_ns)


def reset(site: Site, lab: LabState, kind: str, router: str = "r1") -> tuple[LabState, dict[str, Any]]:
    """Resets ``router`` of ``lab`` (held locked by the caller)."""
    if kind not in KINDS:
        raise LabError(f"reset: {kind!r} is not one of {', '.join(KINDS)}")
    topo = parse_topology(lab.topology)
    node = next((n for n in topo.routers if n.name == router), None)
    if node is None:
        raise LabError(f"reset: topology {lab.topology} has no router {router}")
    start_ns = time.time_ns()
    _take_down(site, node, kind)
    down_ns = time.time_ns()
    known = napi.threads()
    # As a router boots: links up and ready, its rules loaded, then its
    # addresses and routes, from which it forwards. A router that forwarded
    # before its links could transmit would lose its first ARP/ND
    # solicitation and wait 1 s (the retransmit timer) to resolve a next
    # hop: an artefact of the emulation, not of the reset.
    build.bring_up(site, node)
    build.wait_carrier(site, node)
    _forget_unresolved(site.netns(router))
    if kind == "hard":
        build.configure_dut(site, topo, lab.dut_config, lab.link_speed_bps, lab.mtu, only=router)
        rps.apply(site, topo, lab.dut_config, lab.cpu_plan, only=router)
    build.address(site, node, lab.mtu)
    if lab.dut_config.tunnel:  # its routes went with the links (and its device with a hard reset's namespace)
        tunnel_setup.configure(site, topo, lab.dut_config.tunnel, lab.mtu.of("r1", "r2"), only=router,
                         scoped=lab.dut_config.scope == "flow2")
    # A TAYGA ended with the namespace: started again.
    taygas = translator.start_all(site, topo, lab.dut_config, lab.cpu_plan, only=router) if kind == "hard" else []
    if lab.fib is not None:  # the table went with its next hops' link (or namespace): learned again, as a router does
        d = lab.dut_config
        fib_load.load(site, topo, d.table, d.table_seed, d.destinations,
                      fib_load.namespace_shells(site, topo, d.table, d.table_seed), only=router)
    threads, pinning = _repin(site, lab, topo, router, known, [
        t for t in lab.napi if not (taygas and t["ifname"] == translator.THREAD and t["node"] == router)])
    if lab.cpu_plan.arrangement == "split":
        threads += taygas
    new = dataclasses.replace(lab, napi=tuple(threads))
    save(site, new)
    end_ns = time.time_ns()
    return new, {"reset_kind": kind, "router": router, "reset_started_unix_ns": start_ns,
                 "reset_down_s": (down_ns - start_ns) / 1e9, "reset_took_s": (end_ns - start_ns) / 1e9, "dut_napi_pinning": pinning}


def _take_down(site: Site, node: Node, kind: str) -> None:
    """A soft reset takes the router's links down; a hard one its whole
    namespace and what runs in it (a translator), its interfaces kept
    aside in a holding namespace and moved into the new one."""
    if kind == "soft":
        _links_down(site, node)
        return
    names = [i.name for i in node.interfaces]
    hold = site.netns("hold")
    pr_netns.create(hold)
    try:
        _move(site.netns(node.name), hold, names)
        nsctl.remove(site.netns(node.name))  # its processes too: a namespace outlives its name while one runs
        build.create_node_namespace(site, node)
        _move(hold, site.netns(node.name), names)
    finally:
        pr_netns.remove(hold)


def _repin(site: Site, lab: LabState, topo: Topology, router: str, known: dict[int, str],
           threads: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], str]:
    """The lab's NAPI threads after a reset of ``router``, and what became of its pinning: ``kept``, ``re-pinned``
    (the kernel ended the router's threads: its new ones pinned as at the build), or ``lost: why`` (the reset
    stands; the pinning is lost, and said so)."""
    if lab.cpu_plan.arrangement != "split":
        return threads, "kept"
    mine = [t for t in threads if t["node"] == router and t["ifname"] != translator.THREAD]
    if all(os.path.exists(f"/proc/{t['pid']}") for t in mine):
        return threads, "kept"
    others = [t for t in threads if t["node"] != router]
    try:
        return others + build.arrange_cpus(site, topo, lab.cpu_plan, only=router, known=known), "re-pinned"
    except LabError as e:
        return others, f"lost: {e}"
