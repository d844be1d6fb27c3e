"""What a data plane is (:class:`DataPlane`) and what it acts on (:class:`RouterHost`).

A data plane is set up in a router after the kernel gave the router its
addresses, routes and DUT configuration, and before traffic; it counts
what it forwarded in :data:`COUNTS` (cumulative, read before and after a
trial, lab/emulated/observe.py). Everything it does to a router goes
through the :class:`RouterHost`, so one data plane serves namespace and VM
routers alike where both can run it (``router_kinds``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from ..model.dut import DutConfig

#: A data plane's own counts [frames], cumulative since it was set up: the transit frames it forwarded
#: per family (every path), and of them those its slow path forwarded (handed to the kernel's forwarding
#: by a fast path, an OVS upcall, a flowtable's first frames of a flow); 0 where it has no slow path.
COUNTS = ("forwarded_ipv4_frames", "forwarded_ipv6_frames", "slow_path_frames")


class RouterHost(Protocol):
    """One router a data plane runs in: its ``name`` (``r1``), its test
    ``interfaces`` (toward its neighbours), ``work_dir`` (a directory of
    its own on this machine, removed with the lab), ``run_dir`` (a
    directory of its own as the router sees it, gone with the lab),
    ``cpu`` (the DUT CPU its work belongs on, None: not pinned or not this
    machine's to pin), ``command`` (a program's output, run in the
    router: its namespace or guest; raises LabError on failure) and
    ``place`` (a file of the data plane's, put where the router can read
    it; returns that path as the router sees it)."""

    @property
    def name(self) -> str: ...
    @property
    def interfaces(self) -> tuple[str, ...]: ...
    @property
    def work_dir(self) -> Path: ...
    @property
    def run_dir(self) -> str: ...
    @property
    def cpu(self) -> int | None: ...

    def command(self, argv: list[str]) -> str: ...

    def place(self, name: str, source: Path) -> str: ...


class DataPlane(Protocol):
    """One way of forwarding in a router:

    - ``name`` (the ``[lab] data_plane`` value), ``summary`` (in words);
      ``router_kinds``: the routers it runs in (lab/model/spec.ROUTERS);
    - ``guest_modules``: the kernel modules it loads in a VM router's guest
      at ``set_up`` (the image holds them, lab/vm/vm_image.py; a guest
      boots without them, so a router without this data plane is as
      before);
    - ``keeps_state``: it keeps state a flow's first frames make through its
      slow path (a connection table, a flow cache), as a stateful DUT
      configuration does (lab/model/dut.py): with RFC 4814 ports a trial
      opens its flows first (trial/preliminary.py);
    - ``carries``: the ``[dut]`` keys it can carry beside forwarding (a
      configuration beyond them is refused before any lab is built,
      :func:`.registry.check`); ``check_machine``: what this machine must
      have installed (raises LabError naming the package);
    - ``set_up``: made ready in one router (after its addresses, routes and
      rule sets), returning what it did (kept in the router's node record
      as ``data_plane``); a list under its key ``cpu_threads`` names the
      processes or threads whose CPU time is the router's forwarding work
      (sampled with its NAPI threads, as the lab keeps them);
    - ``counts``: its :data:`COUNTS` in one router now (``setup``: what
      ``set_up`` returned there);
    - ``record``: what produced it (program and tool versions), stored with
      every result.
    """

    name: str
    summary: str
    router_kinds: tuple[str, ...]
    carries: frozenset[str]
    keeps_state: bool
    guest_modules: tuple[str, ...]

    def check_machine(self) -> None: ...

    def set_up(self, router: RouterHost) -> dict[str, Any]: ...

    def counts(self, router: RouterHost, setup: dict[str, Any]) -> dict[str, int]: ...

    def record(self) -> dict[str, Any]: ...


def place_text(router: RouterHost, name: str, text: str) -> str:
    """``text`` written as the router's ``work_dir/name`` (kept with the lab, what the data plane was
    given) and placed where the router reads it (:meth:`RouterHost.place`); returns that path as the
    router sees it."""
    router.work_dir.mkdir(parents=True, exist_ok=True)
    path = router.work_dir / name
    path.write_text(text)
    return router.place(name, path)
