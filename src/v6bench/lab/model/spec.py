"""The ``[lab]`` and ``[dut]`` tables of a test definition, checked into a
frozen :class:`LabSpec` and :class:`~v6bench.lab.model.dut.DutConfig`.

One route for every front end: a campaign file's tables, and the lab and
DUT options of ``v6bench lab up``, ``trial`` and ``test`` (which
``cli/options.py`` turns into the same tables). Errors name the field
relative to the table (``("topology",)``, ``("acl_at",)``); the caller
places them (``lab.topology``, ``scenario[1].dut.acl_at``, ``--acl-at``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...core.errors import UsageError
from ...core.params import only_keys, parse
from ...core.rates import format_link_speed, parse_link_speed
from . import tunnel
from .cpus import ARRANGEMENTS
from .dut import DutConfig
from .mtu import Mtus
from .mtu import parse as parse_mtu
from .topology import parse_topology

LAB_KEYS = ("topology", "link_speed", "mtu", "cpu_arrangement", "router", "data_plane", "file")
#: How the emulated lab's routers are made (``[lab] router``, ``--router``), each with the noun
#: that describes them: ``ns``, this machine's kernel in a namespace beside the tester; ``vm``, a
#: QEMU virtual machine with Debian's kernel on its own CPU (lab/vm/vm.py). lab/backends.REGISTRY has
#: the backend of each.
ROUTERS = {"ns": "namespace", "vm": "VM"}


@dataclass(frozen=True)
class LabSpec:
    """The lab a test runs on: topology, nominal link speed [b/s], MTUs,
    CPU arrangement (None: the machine's default, lab/model/cpus.py); or an
    external lab file's (``lab_file``: what its kind read from it,
    lab/external/lab_file.py), whose one router between t1 and t2 has the
    shape of topology ``a``. ``lab_kind``: the kind of lab, a key of
    lab/backends.REGISTRY, declared by whoever makes the spec (the ``[lab]
    router`` key: :data:`ROUTERS`; ``external`` with a lab file), never
    derived from the other fields; ``data_plane``: what forwards in the
    routers (``[lab] data_plane``, a name of
    lab/dataplanes/registry.REGISTRY, checked there with the DUT
    configuration by the backend's ``dut_config``)."""

    topology: str = "a"
    link_speed_bps: float = 1e9
    mtu: Mtus = Mtus()
    cpu_arrangement: str | None = None
    lab_file: object | None = None
    lab_kind: str = "ns"
    data_plane: str = "kernel"


#: The lab a definition gets for the keys it does not give.
DEFAULT = LabSpec()


def lab_spec(d: dict[str, Any], base: Path | None = None) -> LabSpec:
    """The ``[lab]`` table: ``topology`` [a], ``link_speed`` [1G], ``mtu``
    [1500; or "LINK=BYTES,…", lab/model/mtu.py], ``cpu_arrangement``, ``router``
    [ns; vm on a topology with routers], ``data_plane`` [kernel]; or
    ``file``, an external lab file, which alone sets the lab: read by its
    kind (lab/interface.lab_spec), not here."""
    only_keys(d, LAB_KEYS)
    if "file" in d:
        raise UsageError("a lab file is read by the kind of lab that has them (lab/interface.lab_spec)", "file")
    topo = d.get("topology", DEFAULT.topology)
    if not isinstance(topo, str):
        raise UsageError(f"expected a name such as \"a\" or \"chain:3\", got {topo!r}", "topology")
    links = [(a.node, b.node) for a, b in parse_topology(topo).links()]
    speed = d.get("link_speed", format_link_speed(DEFAULT.link_speed_bps))
    if not isinstance(speed, str):
        raise UsageError(f"expected a speed such as \"1G\", got {speed!r}", "link_speed")
    mtu_v: Any = d.get("mtu", DEFAULT.mtu)
    if isinstance(mtu_v, Mtus):
        mtu = mtu_v
    elif not isinstance(mtu_v, (int, str)) or isinstance(mtu_v, bool):
        raise UsageError(f"expected bytes or \"LINK=BYTES,…\", got {mtu_v!r}", "mtu")
    else:
        mtu = parse_mtu(mtu_v)
    mtu.check(links)
    arr = d.get("cpu_arrangement")
    if arr is not None and arr not in ARRANGEMENTS:
        raise UsageError(f"{arr!r} is not one of {', '.join(ARRANGEMENTS)}", "cpu_arrangement")
    router = d.get("router", DEFAULT.lab_kind)
    if router not in ROUTERS:
        raise UsageError(f"{router!r} is not one of {', '.join(ROUTERS)}", "router")
    plane = d.get("data_plane", DEFAULT.data_plane)
    if not isinstance(plane, str) or not plane:
        raise UsageError(f"expected a data plane's name such as \"xdp\", got {plane!r}", "data_plane")
    # A router kind or a data plane other than the default needs a router in the topology.
    for key, asked, default, what in (("router", router, DEFAULT.lab_kind, f"make a {router}"),
                                      ("data_plane", plane, DEFAULT.data_plane, f"forward with {plane}")):
        if asked != default and not parse_topology(topo).routers:
            raise UsageError(f"topology {topo} has no router to {what}", key)
    return LabSpec(topo, parse_link_speed(speed), mtu, arr, lab_kind=router, data_plane=plane)


def dut_config(d: dict[str, Any], lab: LabSpec) -> DutConfig:
    """The ``[dut]`` table (lab/model/dut.py), on ``lab``, as every kind of lab
    reads it: an ACL's place and protocol need an ACL; a tunnel needs
    topology b. What a kind of lab adds (which keys it takes, which tunnels
    its routers have) is its backend's ``dut_config`` (lab/backends.py),
    which calls this."""
    dut = parse(DutConfig, d, ())
    if "acl_at" in d and not dut.acl:
        raise UsageError("needs an ACL (acl = 1 or more rules)", "acl_at")
    tunnel.check_topology(dut.tunnel, lab.topology)
    if dut.nat64 and lab.topology != "a":
        raise UsageError(f"NAT64 is on R1 of topology a (t1 -- r1 -- t2), not {lab.topology}", "nat64")
    for key, ends in (("xlat", "464XLAT's CLAT is on R1 and its PLAT"), ("dslite", "DS-Lite's B4 is on R1 and its AFTR")):
        if getattr(dut, key) and lab.topology != "b":
            raise UsageError(f"{ends} on R2 of topology b (t1 -- r1 -- r2 -- t2), not {lab.topology}", key)
    return dut
