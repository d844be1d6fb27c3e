"""A command on one of the lab's routers, whatever makes it: in its
namespace (:func:`v6bench.lab.emulated.nsctl.command`) or, for a VM router, in its
guest over the control port (:class:`v6bench.lab.vm.guest.Guest`). ``node``
is the router's record in the lab's node list (``lab status --json``).
"""

from __future__ import annotations

from . import nsctl
from ..vm.guest import Guest, control_socket


def command(node: dict, argv: list[str], input_text: str | None = None, timeout_s: float = 30) -> str:
    """``argv``'s output on router ``node``; a failure is a LabError naming it."""
    vm = node.get("vm")
    if vm:
        return Guest(node["name"], control_socket(vm["run_dir"], node["name"])).command(argv, input_text, timeout_s)
    return nsctl.command(node["netns"], argv, input_text, timeout_s)
