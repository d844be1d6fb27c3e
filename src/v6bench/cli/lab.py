"""``v6bench lab up | status | down``."""

from __future__ import annotations

import argparse

from ..lab import interface
from ..lab.model.site import Site
from ..core.errors import UsageError
from . import render
from ..trial import probe
from ..trial.warmup import warm_up
from .options import EXTERNAL_LAB, Options, add_json, add_lab, dut_table, lab_table


def add(sub: argparse._SubParsersAction, parser_class: type) -> None:
    lab = sub.add_parser("lab", help="build, show or remove the emulated lab; check an external lab file")
    lab_sub = lab.add_subparsers(dest="lab_command", required=True, parser_class=parser_class)
    up = Options(lab_sub.add_parser("up", help="build the lab (one per machine)"))
    add_lab(up, defaults=True, external=False)
    add_json(up, "the lab")
    add_json(Options(lab_sub.add_parser("status", help="show the lab that is up")), "the lab")
    Options(lab_sub.add_parser("down", help="remove the lab and anything a crashed run left"))
    check = Options(lab_sub.add_parser("check", help="check an external lab file: its ports, the gateways' MACs "
                                       "(ARP/ND), a probe of a few frames through the DUT, one SNMP poll"))
    check.add("file", EXTERNAL_LAB)
    check.flags["file"] = EXTERNAL_LAB.flag
    add_json(check, "what was found")
    Options(lab_sub.add_parser("vm-image", help="build the VM router's guest image from this machine's Debian "
                               "packages (make setup runs it; docs/vm-router.md)"))
    lab.set_defaults(command_run=run)


def run(site: Site, args: argparse.Namespace, say) -> int:
    if args.lab_command == "up":
        lab, dut = specs(args, {})
        built = interface.up(site, lab, dut)
        if built.fib:  # its table crossed once before any trial (trial/warmup.py)
            with interface.for_trial(site, lab, dut) as held:
                say(warm_up(held)[1])
        print(render.status(built, False, args.json))
    elif args.lab_command == "status":
        print(render.status(*interface.status(site), args.json))
    elif args.lab_command == "check":
        if args.file is None:
            raise UsageError("give the external lab file to check", "file")
        lab, _ = specs(args, {})
        print(render.lab_check(probe.check(site, lab), args.json))
    elif args.lab_command == "vm-image":
        print(interface.prepare("vm"))
    else:
        removed = interface.down(site)
        print(f"removed {', '.join(removed)}" if removed else "no lab was up")
    return 0


def specs(args: argparse.Namespace, current: dict):
    """The lab and DUT the options give over ``current`` (a ``[lab]``
    table), checked like a campaign's; the DUT is None if no option gave one."""
    try:
        lab = interface.lab_spec(lab_table(args, current))
    except UsageError as e:
        raise e.at("lab") from None
    d = dut_table(args)
    try:
        return lab, (interface.dut_config(d, lab) if d is not None else None)
    except UsageError as e:
        raise e.at("dut") from None
