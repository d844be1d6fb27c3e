"""Every data plane (:data:`REGISTRY`), and the check of a choice against a router kind and a DUT configuration."""

from __future__ import annotations

from ...core.errors import UsageError
from ..model.dut import DutConfig
from .flowtable import plane as flowtable
from .kernel import plane as kernel
from .ovs import plane as ovs
from .protocol import DataPlane
from .xdp import plane as xdp

#: Every data plane by its ``[lab] data_plane`` name; a new one is its folder and one line here.
REGISTRY: dict[str, DataPlane] = {"kernel": kernel.PLANE, "xdp": xdp.PLANE, "ovs": ovs.PLANE,
                                   "ovs-kernel": ovs.KERNEL_PLANE, "flowtable": flowtable.PLANE}
DEFAULT = "kernel"


def find(name: str) -> DataPlane:
    """The data plane ``name``; a UsageError naming the field ``data_plane`` and the choices otherwise."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise UsageError(f"{name!r} is not one of {', '.join(REGISTRY)}", "data_plane") from None


def keeps_state(dut: DutConfig, name: str = DEFAULT) -> bool:
    """Whether a router with configuration ``dut`` forwarding with data plane ``name`` keeps state for the
    flows of test frames (:attr:`DutConfig.keeps_state`, or a data plane that does: the flowtable's connection
    tracking, Open vSwitch's flow cache), so that RFC 4814's pseudorandom ports need RFC 9693's preliminary phase (trial/preliminary.py)."""
    return dut.keeps_state or find(name).keeps_state


def check(name: str, router_kind: str, dut: DutConfig | None = None) -> DataPlane:
    """The data plane ``name``, which must run on routers of ``router_kind`` and carry ``dut`` (every field
    of it that is not the default must be one it ``carries``): refused in one line otherwise."""
    plane = find(name)
    if router_kind not in plane.router_kinds:
        raise UsageError(f"the {name} data plane runs on {' or '.join(plane.router_kinds)} routers, not {router_kind}",
                         "data_plane")
    if dut is not None:
        default = DutConfig()
        for field in DutConfig.__dataclass_fields__:
            if field not in plane.carries and getattr(dut, field) != getattr(default, field):
                raise UsageError(f"{plane.summary} cannot carry {field} = {getattr(dut, field)!r}: the kernel's "
                                 f"stack it passes by would do that (data_plane = \"kernel\" can)", field)
    return plane
