"""Command-line options as fields of a test definition.

Every option sets one field of the document a campaign file holds (the
``[lab]``, ``[dut]`` and ``[[test]]`` keys, or a trial's fields), and is
declared here once: :class:`Options` adds it to a parser and remembers
which field it sets, so that an error about a field (``("test", 0,
"mixes", 1)``, :class:`~v6bench.core.errors.UsageError`) is shown as the option
that set it (``--mix``). The options of ``test KIND`` are made from the
kind's parameter dataclass (:func:`add_params`): an option that does not
apply to a kind does not exist for it, and argparse refuses it before
anything runs.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import typing
from dataclasses import dataclass
from typing import Any

from .. import selftest
from ..core.errors import Field, UsageError, field_path
from ..lab.model.cpus import ARRANGEMENTS
from ..core.rates import format_link_speed
from ..fib.shapes import TABLES
from ..lab.model.dut import ACL_AT, ACL_FAMILIES, RPS_MODES, DutConfig
from ..lab.model.spec import DEFAULT as DEFAULT_LAB, ROUTERS
from ..lab.interface import data_planes
from ..lab.model.tunnel import NAMES as TUNNELS
from ..methods.stateful import CAPACITY_SEARCHES
from ..lab.model.translation import MODES as NAT64_MODES
from ..lab.model.xlat import MODES as XLAT_MODES
from ..methods.throughput import SEARCHES, STARTS
from ..core.tester import RESET_KINDS
from ..store.connection import ENV as DB_ENV, default_location
from ..core.ext_headers import PRESETS as EXT_PRESETS
from ..core.frames import FLOWS as FLOWS_ALLOWED, PORTS as FRAME_PORTS
from ..core.frames import ICMP_ECHO_TARGETS, MESH_PATTERNS, SCOPES
from ..methods.latency import FAMILY_DESIGNS


@dataclass(frozen=True)
class Option:
    """One option: its flag (and other spellings), help, and how it reads.
    ``items``: a comma-separated list; ``switch``: present or not."""

    flag: str
    help: str = ""
    choices: tuple[str, ...] | None = None
    metavar: str | None = None
    aliases: tuple[str, ...] = ()
    items: bool = False
    switch: bool = False


LAB = {
    "topology": Option("--topology", "p2p, a (t1-r1-t2), b (t1-r1-r2-t2), chain:N (1..5 routers) or mesh:N"),
    "link_speed": Option("--link-speed", "nominal link speed: 100M, 1G, 10G (line rate: the most test frames the path carries at it)"),
    "mtu": Option("--mtu", "IP MTU of every lab link, or per link: r1-r2=500, all=9000,r1-r2=1280 (lab/model/mtu.py); "
                  "IPv4 is fragmented by the routers, IPv6 at the source", metavar="BYTES|LINK=BYTES,…"),
    "cpu_arrangement": Option("--cpu-arrangement", "split: DUT on its own CPU(s), CPU measured; inline: all in the "
                              "sender (docs/architecture.md) [split on 2+ CPUs]", choices=ARRANGEMENTS),
    "router": Option("--router", "how the routers are made: ns (this machine's kernel, in a namespace) or vm "
                     "(QEMU with Debian's kernel, its own CPU and real tunnels; docs/vm-router.md) [ns]",
                     choices=tuple(ROUTERS)),
    "data_plane": Option("--data-plane", "what forwards in the routers: "
                         + "; ".join(f"{k}: {v}" for k, v in data_planes().items())
                         + " (docs/data-planes.md) [kernel]", choices=tuple(data_planes())),
}
#: The option of an external lab: ``trial`` and ``test`` take it; ``lab up`` builds the emulated lab.
EXTERNAL_LAB = Option("--lab", "an external lab file (TOML, docs/external-lab.md): test the router it declares "
                      "instead of building one; no other lab or DUT option with it", metavar="FILE")
DUT = {
    "limit_fps": Option("--dut-limit", "a DUT of known capacity: R1 drops above FPS frames/s per direction "
                        "(nftables limit) [none]", metavar="FPS"),
    "max_connections": Option("--max-connections", "a DUT of known connection capacity: R1 holds at most N IPv4 "
                              "connections (nftables ct count; RFC 9693's known answer) [none]", metavar="N"),
    "max_new_fps": Option("--max-new-connections", "a DUT of known establishment rate: R1 opens at most N IPv4 "
                          "connections a second [none]", metavar="N"),
    "acl": Option("--acl", "access lists in R1, one per IP version, of RULES rules: RULES - 1 denies and the "
                  "permit last (seed 000 §3: 1 or 25), or none [none]", metavar="RULES"),
    "acl_family": Option("--acl-family", "which IP version's frames walk their list; the other is forwarded "
                         "unfiltered, its control in the same trial [both]", choices=ACL_FAMILIES),
    "acl_at": Option("--acl-at", "where the ACL filters: in (R1's input port), out (its output port), both [in]",
                     choices=ACL_AT),
    "acl_udp_only": Option("--acl-udp-only", "the ACL permits only UDP: IPv6 frames are walked to their transport "
                           "header", switch=True),
    "nat44": Option("--nat44", "IPv4 source NAT on R1 toward t2 (IPv6 forwarded as before)", switch=True),
    "nat64": Option("--nat64", "NAT64 on R1 (topology a; TAYGA on namespace routers): t1's IPv6 frames go to "
                    "t2's IPv4 address in the prefix 2001:2:0:6464::/96 and arrive as IPv4; stateless (SIIT, "
                    "RFC 7915) or stateful (RFC 6146: TAYGA and source NAT) [none]", choices=NAT64_MODES),
    "xlat": Option("--xlat", "double translation on topology b: 464 (464XLAT, RFC 6877: a CLAT on R1 and a "
                   "stateful PLAT on R2, t1's IPv4 crossing R1-R2 as IPv6; namespace routers, TAYGA) [none]",
                   choices=XLAT_MODES),
    "dslite": Option("--dslite", "encapsulation on topology b of VM routers: DS-Lite (RFC 6333: a B4 on R1 tunnels "
                     "t1's IPv4 in IPv6 to the AFTR on R2, which decapsulates it and does NAT44)", switch=True),
    "rps": Option("--rps", "receive packet steering on namespace routers: each frame forwarded on a CPU chosen by "
                  "its flow's hash, counted per CPU with every trial (dut.rps); dut: over the DUT's CPUs (2 or more), "
                  "all: over every CPU, the tester's too [none]", choices=RPS_MODES),
    "tunnel": Option("--tunnel", "topology b: IPv4 in IPv6 or IPv6 in IPv4 between R1 and R2; namespace routers "
                     "(stand-ins): 4in6 by SRv6 encap, 6in4 by VXLAN; VM routers (real): 4in6 by ip6tnl, 6in4 by "
                     "sit, gre6in4, gre4in6 [none]", choices=TUNNELS),
    "shape": Option("--shape", "shape every router interface to the link speed (L1), so converging traffic "
                    "congests", switch=True),
    "table": Option("--table", "a forwarding table like the Internet's in every router on the path (internet: "
                    "1 M IPv4 + 230 k IPv6 prefixes; docs/methods.md), t1's frames walking its prefixes [none]",
                    choices=tuple(TABLES)),
    "table_seed": Option("--table-seed", "the seed the table is made from (the same seed, the same table) [1]",
                         metavar="N"),
    "destinations": Option("--destinations", "with --table: t1's frames go to this many of its prefixes a "
                           "family, one address each, in a seeded permutation [4096]", metavar="N"),
    "scope": Option("--scope", "which test frames the ACL, NAT or tunnel applies to: all, or flow2: only each "
                    "family's second flow (UDP source port 49185), the first its control in the same trials; "
                    "trials then need --flows 2 [all]", choices=tuple(SCOPES)),
}
#: What a trial's frames are (core/frames.py): ``trial`` and the kinds that send test frames.
PORTS = Option("--ports", "the test frames' UDP ports: " + "; ".join(f"{k}: {v}" for k, v in FRAME_PORTS.items())
               + " [auto]", choices=tuple(FRAME_PORTS))
EXT_HEADERS = Option("--ext-headers", "IPv6 extension headers in every IPv6 frame, frame size kept "
                     "(docs/methods.md) [none]", choices=EXT_PRESETS)
ICMP_ECHO = Option("--icmp-echo", "send ICMP Echo Requests instead of UDP test frames, at the rate, size and mix "
                   "given: to R1's own address (dut) or through the DUT to t2, which answers (far); replies are "
                   "counted at t1, latency is the round trip", choices=tuple(ICMP_ECHO_TARGETS))
FLOWS = Option("--flows", "send each family in this many identical flows: 2 makes the second an A/A control of "
               "the first in every trial (the report compares them) [1]", choices=tuple(map(str, FLOWS_ALLOWED)))
EXT_HEADERS_SCOPE = Option("--ext-headers-scope", "flow2: the extension headers on each family's second flow only, "
                           "the first its control in the same trials (with --flows 2) [all]", choices=tuple(SCOPES))
RUNS = Option("--runs", "send the streams in runs of this length each in turn instead of frame by frame; "
              "the DUT's CPU time per frame is then read per family inside each trial (docs/methods.md, "
              "\"Cost per frame in runs\") [frame by frame]", metavar="SECONDS")
PRELIMINARY_CONNECTIONS = Option("--preliminary-connections", "through a DUT that keeps state (NAT44, stateful NAT64): "
                                 "how many connections each stream's RFC 4814 ports walk, all opened by RFC 9693's "
                                 "preliminary phase before every trial [10000]", metavar="N")
ADDRESSES = Option("--addresses", "t1's frames from N source addresses to N destination addresses (and t2's "
                   "back), each walked in a seeded permutation of a range every lab routes (198.18.128.0/17 and "
                   "198.19.128.0/17; 2001:2:0:8000::/64 and 2001:2:0:9000::/64): many flows for receive-side "
                   "scaling [1: the testers' own]", metavar="N")
PRELIMINARY_RATE = Option("--preliminary-rate", "the preliminary phase's rate per sending port, frames/s, below the "
                          "DUT's connection establishment rate [10000]", metavar="FPS")
FOREGROUND = Option("--foreground", "with --flows 2: n/m, n of every m frames of a family are flow 2's (the "
                    "foreground, which meets a scenario scoped to flow 2), the others flow 1's (the background) "
                    "[1/2]", metavar="N/M")
BIDIRECTIONAL = Option("--bidirectional", "the same rate each way (RFC 2544 §14)", switch=True)
#: Kind parameters whose option is not ``--field-name`` (with help); the others are named after their field.
PARAMS = {
    "trial_duration_s": Option("--duration", "seconds per trial", aliases=("--trial-duration",)),
    "duration_s": Option("--duration", "seconds per measurement"),
    "loads": Option("--loads", "loads such as throughput,50%%,10kpps", items=True),
    "loads_pct": Option("--loads", "percentages of line rate, e.g. 10,50,95", items=True),
    "kinds": Option("--kinds", ",".join(RESET_KINDS), items=True),
    "pattern": Option("--pattern", "full or partial", choices=tuple(MESH_PATTERNS)),
    "families": Option("--families", "paired: IPv4 and IPv6 in every trial (mixes 100/0 and 0/100 run as one 50/50 "
                       "mix, compared trial by trial); separate: each family in trials of its own",
                       choices=FAMILY_DESIGNS),
    "protocols": Option("--protocol", "tcp,udp", items=True),
    "message_sizes": Option("--message-size", "comma-separated bytes per write or datagram", items=True),
    "payload_sizes": Option("--payload-size", "comma-separated IP payload bytes (UDP header and data), 'mtu' for "
                            "the largest the path carries whole", items=True),
    "search": Option("--search", "throughput search", choices=SEARCHES),
    "resolution": Option("--resolution", "relative resolution of the search"),
    "pdr_loss_ratio": Option("--pdr-loss-ratio", "loss ratio goal of the PDR"),
    "start": Option("--start", "where the binary search starts: the line rate, or the same mix's result at the "
                    "nearest other frame size measured before", choices=STARTS),
    "confirm_losses": Option("--confirm-losses", "a load that lost frames is tried N more times and fails only if "
                             "they all lose (binary search)", metavar="N"),
}
#: A kind's parameter with an option of its own name (kind, field).
KIND_PARAMS = {("mesh", "loads"): Option("--rate", "comma-separated loads per sending port, e.g. 10%%,50%%,20kpps",
                                         items=True),
               ("connections", "metrics"): Option("--metrics", "RFC 9693's metrics, comma-separated: capacity, "
                                                  "establishment_rate, tear_down_rate", items=True),
               ("connections", "search_max_connections"): Option(
                   "--search-max-connections", "the capacity search's top: its first trial opens this many "
                   "connections (a table that holds them all has at least this capacity)", metavar="N"),
               ("connections", "connections"): Option("--connections", "N, the connections the establishment and "
                                                      "tear-down rates open each trial", metavar="N"),
               ("connections", "min_rate_fps"): Option("--min-rate", "lowest establishment rate searched, new "
                                                       "connections/s", metavar="FPS"),
               ("connections", "max_rate_fps"): Option("--max-rate", "highest establishment rate searched, new "
                                                       "connections/s", metavar="FPS"),
               ("connections", "open_rate_fps"): Option("--open-rate", "the rate the capacity search and the "
                                                        "tear-down rate open connections at, frames/s (below the "
                                                        "DUT's establishment rate)", metavar="FPS"),
               ("connections", "validate_rate_fps"): Option("--validate-rate", "the rate of the frames from t2's "
                                                            "side that check each connection, frames/s",
                                                            metavar="FPS"),
               ("connections", "capacity_search"): Option("--capacity-search", "bisection (connections opened at "
                                                          "--open-rate) or rfc9693 (sizes doubled from "
                                                          "--capacity-start, an establishment-rate search at each)",
                                                          choices=CAPACITY_SEARCHES),
               ("connections", "capacity_start"): Option("--capacity-start", "RFC 9693's capacity search: a table "
                                                         "size the DUT surely holds", metavar="N"),
               ("connections", "connection_timeout_s"): Option("--connection-timeout", "how long the DUT is set to "
                                                               "keep an idle connection for the test, s",
                                                               metavar="S")}
#: Fields without an option of their own: ``repeat`` is --repeat (the kind's or the test's), ``mtu_payload``
#: the item 'mtu' of --payload-size.
NO_OPTION = ("repeat", "mtu_payload")
#: Fields of the throughput search (methods/throughput.py) a test that starts from one takes as options.
SEARCH = ("search", "resolution", "pdr_loss_ratio", "trial_duration_s")


class Options:
    """The options of one command: which field each sets, and the flag of a field."""

    def __init__(self, parser: argparse.ArgumentParser) -> None:
        self.parser = parser
        self.flags: dict[str, str] = {"db": "--db", "resume": "--resume", "run": "RUN", "file": "FILE", "kind": "KIND",
                                      "dut": "the DUT options (--dut-limit, --acl …)"}
        parser.set_defaults(options=self)

    def add(self, name: str, option: Option, default: Any = None, help_default: str = "") -> None:
        """``option`` sets field ``name`` (argparse dest ``name``)."""
        self.flags.setdefault(name, option.flag)
        if option.flag in self.parser._option_string_actions:  # one option for two fields (kind's and search's)
            return
        text = option.help + (f" [{help_default.replace('%', '%%')}]" if help_default else "")
        if option.switch:
            self.parser.add_argument(option.flag, *option.aliases, dest=name, action="store_true", default=default,
                                     help=text)
        else:
            self.parser.add_argument(option.flag, *option.aliases, dest=name, default=default, choices=option.choices,
                                     metavar=option.metavar or (None if option.choices else option.flag[2:].upper()),
                                     help=text)

    def flag(self, field: Field) -> str:
        """The option that sets ``field`` (its innermost named part), or the field's path."""
        for part in reversed(field):
            if isinstance(part, str) and part in self.flags:
                return self.flags[part]
        return field_path(field)

    def render(self, e: UsageError) -> str:
        return f"{self.flag(e.field)}: {e.message}" if e.field else e.message


def add_lab(o: Options, defaults: bool, external: bool = True) -> None:
    """The ``[lab]`` and ``[dut]`` options; ``defaults``: show the lab's
    defaults; ``external``: ``--lab FILE`` too."""
    shown = {"topology": DEFAULT_LAB.topology, "link_speed": format_link_speed(DEFAULT_LAB.link_speed_bps),
             "mtu": str(DEFAULT_LAB.mtu)}
    if external:
        o.add("file", EXTERNAL_LAB)
        o.flags["file"] = EXTERNAL_LAB.flag  # the field [lab] file; `run FILE`'s positional is another command's
    for name, option in LAB.items():
        o.add(name, option, help_default=shown.get(name, "") if defaults else "")
    for name, option in DUT.items():
        o.add(name, option)


def add_selftest(o: Options) -> None:
    default = os.environ.get("V6BENCH_SELFTEST", "if-stale")
    o.parser.add_argument("--selftest", choices=selftest.WHEN, default=default,
                          help="measure the tester first (its capacity and latency floor, stored in --db): when the "
                               "stored self-test is missing or stale (other kernel, engine, CPU arrangement, MTU), "
                               f"always, or never [$V6BENCH_SELFTEST or if-stale: {default}]")


def add_db(o: Options) -> None:
    o.parser.add_argument("--db", default=default_location(),
                          help=f"results store: an SQLite file or a postgresql:// URL [${DB_ENV}, else results/v6bench.db]")


def add_json(o: Options, what: str) -> None:
    o.parser.add_argument("--json", action="store_true", help=f"print {what} as JSON")


def param_option(kind: str, name: str) -> Option:
    """The option of parameter ``name`` of test kind ``kind``."""
    return KIND_PARAMS.get((kind, name)) or PARAMS.get(name) or Option("--" + name.replace("_", "-"))


def add_params(o: Options, kind: str, params: type, searches: bool) -> None:
    """An option for every field of ``params`` (but :data:`NO_OPTION`),
    and the search's (:data:`SEARCH`) if the kind ``searches``."""
    defaults = params()
    for f in dataclasses.fields(params):
        if f.name not in NO_OPTION:
            value = getattr(defaults, f.name)
            shown = ",".join(map(str, value)) if isinstance(value, tuple) else value
            o.add(f.name, param_option(kind, f.name), help_default=str(shown) if shown is not None else "none")
    if searches:
        o.flags["throughput_search"] = "/".join(PARAMS[name].flag for name in SEARCH if name not in o.flags)
        for name in SEARCH:
            option = PARAMS[name]
            o.add(name, Option(option.flag, option.help + " (of the throughput search the test starts from)",
                               option.choices, aliases=option.aliases))


def items(text: str, name: str) -> list[str]:
    """A comma-separated list, each item stripped; at least one."""
    out = [x.strip() for x in text.split(",") if x.strip()]
    if not out:
        raise UsageError("give a comma-separated list", name)
    return out


def value(hint: Any, text: Any, name: str) -> Any:
    """The option's text as the field's type: a whole number, a number
    (a trailing % allowed), a string, or a list of these."""
    if not isinstance(text, str):
        return text  # a switch, or a default
    if typing.get_origin(hint) is tuple:
        (inner, _) = typing.get_args(hint)
        return [value(inner, x, name) for x in items(text, name)]
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    hint = args[0] if args else hint
    try:
        if hint is int:
            return int(text)
        if hint is float:
            return float(text.rstrip("%"))
    except ValueError:
        raise UsageError(f"{text!r} is not a {'whole number' if hint is int else 'number'}", name) from None
    return text


def params_table(args: argparse.Namespace, params: type) -> dict:
    """The fields of ``params`` given on the command line, typed."""
    hints = typing.get_type_hints(params)
    return {f.name: value(hints[f.name], getattr(args, f.name), f.name) for f in dataclasses.fields(params)
            if f.name not in NO_OPTION and getattr(args, f.name, None) is not None}


def lab_table(args: argparse.Namespace, current: dict) -> dict:
    """The ``[lab]`` table: the options given, else ``current``'s (the
    emulated lab that is up); with ``--lab FILE`` that file and the
    other options given (which the lab's rules refuse beside it)."""
    given = {name: getattr(args, name) for name in LAB if getattr(args, name, None) is not None}
    if getattr(args, "file", None) is not None:
        return {"file": args.file, **given}
    return {**current, **given}


def dut_table(args: argparse.Namespace) -> dict | None:
    """The ``[dut]`` table of the options given; None if none was."""
    given = {name: getattr(args, name) for name in DUT if getattr(args, name, None) is not None}
    if not given:
        return None
    if "acl" in given:
        given["acl"] = 0 if given["acl"] == "none" else value(int, given["acl"], "acl")
    for name in ("limit_fps", "table_seed", "destinations", "max_connections", "max_new_fps"):
        if name in given:
            given[name] = value(int, given[name], name)
    return given


def dut_of(dut: DutConfig) -> dict:
    """``dut`` as a ``[dut]`` table of its fields that differ from the defaults."""
    plain = DutConfig().to_json()
    return {k: v for k, v in dut.to_json().items() if v != plain.get(k)}

