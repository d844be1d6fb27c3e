"""``v6bench trial``: one trial on the lab that is up, or on a temporary one."""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import dataclass

from .. import selftest
from ..lab import interface
from ..lab.model.dut import DutConfig
from ..lab.model.site import Site
from ..report import trial as trial_text
from ..store.connection import is_url
from ..store.db import Store
from ..trial import execute
from ..trial.warmup import warm_up
from ..core.frames import MESH_PATTERNS
from ..trial.request import make_request
from . import lab as lab_cmd
from .options import ADDRESSES, BIDIRECTIONAL, EXT_HEADERS, EXT_HEADERS_SCOPE, FLOWS, FOREGROUND, ICMP_ECHO, PORTS, PRELIMINARY_CONNECTIONS, PRELIMINARY_RATE, RUNS, Option, Options, add_db, add_json, add_lab, add_selftest, value

TRIAL = {  # field: (option, default)
    "mix": (Option("--mix", "IPv4/IPv6 percentages of frames, e.g. 100/0, 90/10, 0/100"), "50/50"),
    "frame_size": (Option("--frame-size", "bytes incl. FCS; IPv6 needs 84 or more"), "128"),
    "rate": (Option("--rate", "per direction: 20000fps, 20kpps, 50%% (of the path's line rate: fragments and tunnel overhead counted), 30Mbps (L1), 30Mbps:l2"), "10%"),
    "duration_s": (Option("--duration", "traffic seconds"), "10"),
}


def add(sub: argparse._SubParsersAction, parser_class: type) -> None:
    o = Options(sub.add_parser("trial", help="run one trial on the lab that is up, or on a temporary one"))
    for name, (option, default) in TRIAL.items():
        o.add(name, option, default=default, help_default=default)
    o.add("bidirectional", BIDIRECTIONAL)
    o.add("icmp_echo", ICMP_ECHO)
    o.add("ext_headers", EXT_HEADERS)
    o.add("flows", FLOWS)
    o.add("ext_headers_scope", EXT_HEADERS_SCOPE)
    o.add("runs_s", RUNS)
    o.add("ports", PORTS)
    o.add("preliminary_connections", PRELIMINARY_CONNECTIONS)
    o.add("preliminary_rate_fps", PRELIMINARY_RATE)
    o.add("addresses", ADDRESSES)
    o.add("foreground", FOREGROUND)
    o.add("mesh", Option("--mesh", "mesh traffic among the testers of a mesh:N topology, --rate per sending port: "
                         + "; ".join(f"{k}: {v}" for k, v in MESH_PATTERNS.items()), choices=tuple(MESH_PATTERNS)))
    add_json(o, "the result")
    add_selftest(o)
    add_db(o)
    add_lab(o, defaults=False)
    o.parser.set_defaults(command_run=run)


@dataclass(frozen=True)
class CurrentLab:
    """The lab that is up, as a trial's options see it: its ``[lab]`` table
    (the CPU arrangement only if given: a trial checks what it is given
    against the lab), DUT configuration and kind; the defaults if none is
    up."""

    table: dict
    dut: DutConfig = DutConfig()
    lab_kind: str | None = None

    def dut_for(self, lab_kind: str) -> DutConfig:
        """The DUT configuration of a test on a lab of ``lab_kind`` given no DUT options: the lab's that is
        up if the test runs on it (the same kind: lab/backends.KEPT's), the defaults on another kind
        (an external lab file's router)."""
        return self.dut if lab_kind == self.lab_kind else DutConfig()


def current_lab(site: Site) -> CurrentLab:
    """The lab that is up (:class:`CurrentLab`)."""
    current, _ = interface.status(site)
    if current is None:
        return CurrentLab({})
    return CurrentLab(interface.lab_table(current), current.dut_config, current.lab_kind)


def translation_options(args: argparse.Namespace) -> dict:
    """The traffic options of RFC 9693's and RFC 8219's translators given (``preliminary_connections``,
    ``preliminary_rate_fps``, ``foreground``), and the addresses the frames walk (``addresses``)."""
    out: dict = {}
    if getattr(args, "preliminary_connections", None) is not None:
        out["preliminary_connections"] = value(int, args.preliminary_connections, "preliminary_connections")
    if getattr(args, "preliminary_rate_fps", None) is not None:
        out["preliminary_rate_fps"] = value(float, args.preliminary_rate_fps, "preliminary_rate_fps")
    if getattr(args, "foreground", None) is not None:
        out["foreground"] = args.foreground
    if getattr(args, "addresses", None) is not None:
        out["addresses"] = value(int, args.addresses, "addresses")
    return out


def run(site: Site, args: argparse.Namespace, say) -> int:
    req = make_request(args.mix, value(int, args.frame_size, "frame_size"), args.rate,
                       value(float, args.duration_s, "duration_s"), args.bidirectional, args.ext_headers,
                       args.icmp_echo, args.mesh, int(args.flows or 1), args.ext_headers_scope or "all",
                       value(float, args.runs_s, "runs_s") if args.runs_s else None, args.ports or "auto",
                       **translation_options(args))
    current = current_lab(site)
    lab, dut = lab_cmd.specs(args, current.table)
    dut = dut if dut is not None else current.dut_for(lab.lab_kind)
    req.check_on_lab(lab.topology, lab.link_speed_bps, lab.mtu, interface.spec_tunnel(lab, dut), dut)  # bad input before any privileged work
    st = None
    if args.selftest != "never" or is_url(args.db) or os.path.exists(args.db):  # `never` creates no database
        with Store(args.db) as store:
            st = selftest.ensure(site, store, args.selftest, (req.frame_size,), (req.frame_size,), lab.mtu.largest,
                                 lab.cpu_arrangement, say)
    with interface.for_trial(site, lab, dut) as built:
        if built.table_new:  # a table given for this trial: learned and crossed once first
            built, line = warm_up(built)
            if line:
                say(line)
        result = execute.trial(built, req, site.engine_pid_file, selftest=st[1] if st else None)
    print(json.dumps(result, indent=1) if args.json else trial_text.render(result))
    return 0
