"""Lab life cycle: ``lab up``, ``lab down``, ``lab status``, and the lab a
trial runs on. Each operation takes the machine's lab lock and first removes
a stale lab (:func:`v6bench.lab.emulated.state.stale_reason`), saying so on stderr.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from typing import Iterator

from ...core.errors import LabError, UsageError
from ...core.rates import format_link_speed
from ..dataplanes import registry as data_planes
from . import build, state
from ..machine import lock
from ..model.cpus import plan
from ..model.dut import DutConfig
from ..model.mtu import Mtus
from ..model.site import Site
from ..model.spec import DEFAULT, ROUTERS
from .state import LabState
from ..model.topology import parse_topology


def _require_root() -> None:
    if os.geteuid() != 0:
        raise LabError("the lab needs root (network namespaces, packet sockets): run as root")


def _recover(site: Site) -> LabState | None:
    """With the lock held: the usable lab, after removing a stale one."""
    current = state.load(site)
    reason = state.stale_reason(site, current)
    if reason:
        removed = build.destroy(site)
        lock.warn(f"removed a stale lab ({reason}){': ' + ', '.join(removed) if removed else ''}")
        return None
    return current


def describe(lab: LabState) -> str:
    plane = "" if lab.data_plane == data_planes.DEFAULT else f" forwarding with {data_planes.find(lab.data_plane).summary}"
    return (f"topology {lab.topology}, {format_link_speed(lab.link_speed_bps)} links, {lab.cpu_plan.arrangement} CPUs, "
            f"{ROUTERS[lab.router_kind]} routers{plane}, DUT {lab.dut_config.describe()}")


def up(site: Site, topology: str, link_speed_bps: float, mtu: Mtus, arrangement: str | None,
       dut: DutConfig = DutConfig(), routers: build.Routers = build.NAMESPACE_ROUTERS,
       data_plane: str = data_planes.DEFAULT) -> LabState:
    """Builds the machine's lab, its routers made by ``routers`` and forwarding with ``data_plane``; refuses if
    one is up."""
    topo = parse_topology(topology)
    cpu_plan = plan(arrangement)
    _require_root()
    with lock.locked(site, "lab up"):
        current = _recover(site)
        if current is not None:
            raise LabError(f"a lab is already up ({describe(current)}): run `v6bench lab down` first")
        return build.build(site, topo, link_speed_bps, mtu, cpu_plan, temporary=False, dut=dut, routers=routers,
                           data_plane=data_plane)


def down(site: Site) -> list[str]:
    """Removes the lab (and anything stale); returns the namespaces removed."""
    _require_root()
    with lock.locked(site, "lab down"):
        return build.destroy(site)


def status(site: Site) -> tuple[LabState | None, bool]:
    """The lab that is up (or None) and whether a command is using it now.

    Does not take the lock and changes nothing: a stale lab is reported as
    none and removed by the next command that takes the lock.
    """
    busy = lock.is_locked(site)
    current = state.load(site)
    if busy:
        return (current if current and current.status == "up" else None), True
    if current is None or state.stale_reason(site, current):
        return None, False
    return current, False


@contextmanager
def for_trial(site: Site, topology: str | None, link_speed_bps: float | None, mtu: Mtus | None,
              arrangement: str | None, dut: DutConfig | None = None,
              routers: build.Routers | None = None, data_plane: str | None = None) -> Iterator[LabState]:
    """The lab a trial runs on, locked for the trial's whole length.

    The lab that is up if there is one (options given must match it);
    otherwise a temporary lab (default topology ``a``, 1G, plain DUT) built now and
    removed afterwards, also on error or Ctrl-C.
    """
    _require_root()
    with lock.locked(site, "trial"):
        current = _recover(site)
        if current is not None:
            wanted = {  # field: (the value given, or None; the lab's)
                "topology": (parse_topology(topology).name if topology else None, current.topology),
                "link_speed": (link_speed_bps, current.link_speed_bps),
                "mtu": (mtu, current.mtu),
                "cpu_arrangement": (arrangement, current.cpu_plan.arrangement),
                "dut": (dut, current.dut_config),
                "router": (routers.router_kind if routers else None, current.router_kind),
                "data_plane": (data_plane, current.data_plane),
            }
            for field, (given, have) in wanted.items():
                if given is not None and given != have:
                    raise UsageError(f"the lab that is up has {describe(current)} (mtu {current.mtu}); "
                                     f"use it as it is or run `v6bench lab down` first", field)
            yield current
            return
        lab = build.build(site, parse_topology(topology or DEFAULT.topology), link_speed_bps or DEFAULT.link_speed_bps,
                          mtu or DEFAULT.mtu,
                          plan(arrangement), temporary=True, dut=dut or DutConfig(),
                          routers=routers or build.NAMESPACE_ROUTERS, data_plane=data_plane or data_planes.DEFAULT)
        try:
            yield lab
        finally:
            if os.getpid() == lab.owner_pid:  # never from a forked helper
                build.destroy(site)
