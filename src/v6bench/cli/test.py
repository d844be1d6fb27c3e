"""``v6bench test KIND`` (one test as a one-test campaign) and ``v6bench run FILE``.

Each kind has options of its own, made from its parameter dataclass
(``cli/options.py``); the test becomes the ``[[test]]`` table of a
campaign and is checked by the campaign's own rules (campaign/spec.py),
so a command line and a file accept and refuse the same tests.
"""

from __future__ import annotations

import argparse
import json
import sys
import typing

from .. import selftest
from ..campaign import estimate, runner
from ..campaign import spec as campaign_spec
from ..core.errors import UsageError
from ..lab import interface
from ..lab.model.site import Site
from ..methods import registry, throughput
from ..core.params import parse
from ..store.db import Store
from . import render
from .options import ADDRESSES, BIDIRECTIONAL, EXT_HEADERS, EXT_HEADERS_SCOPE, FLOWS, FOREGROUND, ICMP_ECHO, PORTS, PRELIMINARY_CONNECTIONS, PRELIMINARY_RATE, RUNS, SEARCH, Option, Options, add_db, add_json, add_lab, add_params, add_selftest, dut_of, dut_table, items, lab_table, params_table, value
from .trial import current_lab, translation_options

MIXES = Option("--mix", "comma-separated IPv4/IPv6 mixes")
FRAME_SIZES = Option("--frame-size", "comma-separated frame sizes, bytes incl. FCS")
DRAIN = Option("--drain", "seconds to wait for late frames after each trial")
SETTLE = Option("--settle", metavar="SECONDS", help="seconds between the engine's learning of the gateways (ARP, ND) and each trial's first "
                "test frame, 0-10 [the engine's 0.5]")
REPEAT = Option("--repeat", "repetitions (inside the test for latency, back-to-back, recovery, reset; of the test "
                "otherwise) [what a verdict needs where the report compares, in 5 interleaved blocks: 5 searches, "
                "5 resets, latency's 20 trials as 4 a block; 1 otherwise]")
#: The command line's matrix where a test gives none (a campaign file's are campaign/spec.py's).
DEFAULTS = {"mixes": "100/0,0/100", "frame_sizes": "128", "drain_s": "2"}


def add(sub: argparse._SubParsersAction, parser_class: type) -> None:
    te = sub.add_parser("test", help="run one RFC test over mixes and frame sizes, recorded in the results database")
    kinds = te.add_subparsers(dest="kind", required=True, parser_class=parser_class, metavar="KIND",
                              help="; ".join(f"{k}: {v.summary}" for k, v in registry.KINDS.items()))
    for k in registry.KINDS.values():
        o = Options(kinds.add_parser(k.name, help=k.summary, description=k.summary))
        o.add("mixes", MIXES, default=DEFAULTS["mixes"], help_default=DEFAULTS["mixes"])
        frames = isinstance(k, registry.Kind)
        if frames:
            o.add("frame_sizes", FRAME_SIZES, default=DEFAULTS["frame_sizes"], help_default=DEFAULTS["frame_sizes"])
            # The mesh pattern sets the directions, and sends UDP frames only; RFC 9693's phases send their own.
            if k.name != "mesh" and not k.opens_connections:
                o.add("directions", BIDIRECTIONAL)
                o.add("ext_headers", EXT_HEADERS)
                o.add("icmp_echo", ICMP_ECHO)
                o.add("flows", FLOWS)
                o.add("ext_headers_scope", EXT_HEADERS_SCOPE)
                o.add("runs_s", RUNS)
                o.add("ports", PORTS)
                o.add("preliminary_connections", PRELIMINARY_CONNECTIONS)
                o.add("preliminary_rate_fps", PRELIMINARY_RATE)
                o.add("foreground", FOREGROUND)
                o.add("addresses", ADDRESSES)
            o.add("drain_s", DRAIN, default=DEFAULTS["drain_s"], help_default=DEFAULTS["drain_s"])
            o.add("settle_s", SETTLE)
        add_params(o, k.name, k.params, searches=frames and k.searches)
        o.add("repeat", REPEAT)
        add_json(o, "the results")
        if frames:  # the host-stack tests send no test frames: no tester self-test
            add_selftest(o)
        add_db(o)
        add_lab(o, defaults=False)
        o.parser.set_defaults(command_run=run_test)
    ru = Options(sub.add_parser("run", help="run a campaign file (TOML) with a progress bar; --resume continues an "
                                "interrupted run"))
    ru.parser.add_argument("file", help="campaign file, e.g. campaigns/quick.toml")
    ru.parser.add_argument("--resume", action="store_true", help="continue the last unfinished run of this file")
    ru.parser.add_argument("--budget", metavar="DURATION", help="a sequential campaign's time budget (2h, 90m, 5400s): "
                           "each test's own blocks first, then blocks for the undecided comparisons while time is left")
    ru.parser.add_argument("--plan", action="store_true", help="print the tests, their trials and the estimated wall time "
                           "on this machine (from the results store's earlier runs), and build no lab")
    add_json(ru, "the run's results at the end")
    add_db(ru)
    ru.parser.set_defaults(command_run=run_file)


def run_test(site: Site, args: argparse.Namespace, say) -> int:
    return _run(site, campaign(site, args), args, resume=False)


def run_file(site: Site, args: argparse.Namespace, say) -> int:
    c = campaign_spec.load(args.file)
    if args.plan:
        with Store(args.db) as store:
            history = estimate.history(store, selftest.machine())
            print(render.plan(c, estimate.plan(c, history, estimate.selftests_due(store, c)), store.where))
        return 0
    budget = budget_s(args.budget) if args.budget else None
    runner.check_budget(c, budget)
    return _run(site, c, args, resume=args.resume, budget_s=budget)


#: A budget's units [s].
BUDGET_UNITS = {"s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}


def budget_s(text: str) -> float:
    """``--budget``: a duration, "2h", "90m", "5400s" or plain seconds [s]."""
    t = text.strip().lower()
    unit = next((u for u in sorted(BUDGET_UNITS, key=len, reverse=True) if t.endswith(u)), "")
    try:
        value = float(t[:len(t) - len(unit)] if unit else t) * BUDGET_UNITS.get(unit, 1.0)
    except ValueError:
        raise UsageError(f"{text!r} is not a duration (2h, 90m, 5400s)", "budget") from None
    if not 60 <= value <= 30 * 86400:
        raise UsageError(f"{text!r} is outside 1 minute .. 30 days", "budget")
    return value


def _run(site: Site, c: campaign_spec.Campaign, args: argparse.Namespace, resume: bool,
         budget_s: float | None = None) -> int:
    with runner.exclusive(site, c), Store(args.db) as store:
        for line in campaign_spec.shortfalls(c):  # only for a run that goes ahead: a refused one says why, alone
            print(f"note: {line}", file=sys.stderr, flush=True)
        run_id = runner.run(site, c, store, resume, " ".join(["v6bench", *sys.argv[1:]]), budget_s=budget_s)
        print(render.run(store, run_id, args.json))
        failed = [t for t in store.tests(run_id) if t["status"] != "done"]
    if failed:  # points the DUT refused (campaign/runner.py): the run went on; its exit says so
        print(f"{len(failed)} test(s) of run {run_id} failed (their reasons in the table above)", file=sys.stderr)
        return 1
    return 0


def test_table(args: argparse.Namespace) -> dict:
    """The ``[[test]]`` table of the options given."""
    k = registry.kind(args.kind)
    test: dict = {"kind": k.name, "mixes": items(args.mixes, "mixes")}
    if isinstance(k, registry.Kind):
        test["frame_sizes"] = value(tuple[int, ...], args.frame_sizes, "frame_sizes")
        test["directions"] = ["bi" if getattr(args, "directions", False) else "uni"]
        test["drain_s"] = value(float, args.drain_s, "drain_s")
        if getattr(args, "settle_s", None) is not None:
            test["settle_s"] = value(float, args.settle_s, "settle_s")
        for key in ("ext_headers", "icmp_echo", "ext_headers_scope", "ports"):
            if getattr(args, key, None):
                test[key] = getattr(args, key)
        if getattr(args, "flows", None):
            test["flows"] = int(args.flows)
        if getattr(args, "runs_s", None):
            test["runs_s"] = value(float, args.runs_s, "runs_s")
        test.update(translation_options(args))
    if getattr(args, "payload_sizes", None) is not None:  # rr-latency: the item 'mtu' is mtu_payload
        sizes = items(args.payload_sizes, "payload_sizes")
        test["mtu_payload"] = "mtu" in sizes
        args = argparse.Namespace(**{**vars(args), "payload_sizes": ",".join(x for x in sizes if x != "mtu") or None})
        test["payload_sizes"] = []
    params = params_table(args, k.params)
    test.update(params)
    if args.repeat is not None:
        test["repeat"] = value(int, args.repeat, "repeat")
    if isinstance(k, registry.Kind) and k.searches:
        search = _search(k, args, {key: v for key, v in test.items() if key in k.params.__dataclass_fields__})
        if search:
            test["throughput_search"] = search
    return test


def _search(k: registry.Kind, args: argparse.Namespace, params: dict) -> dict:
    """The search options given. One the kind shares (``--duration``,
    back-to-back's ``--resolution``) sets the search's too only where the
    test runs one; one of the search alone is the search's, refused by the
    campaign's rules where none runs."""
    hints = typing.get_type_hints(throughput.Params)
    given = {n: value(hints[n], getattr(args, n), n) for n in SEARCH if getattr(args, n, None) is not None}
    try:
        searching = k.needs_throughput(parse(k.params, params, ()))
    except UsageError:
        searching = True  # the test's own error is reported first
    return {n: v for n, v in given.items() if searching or n not in k.params.__dataclass_fields__}


def campaign(site: Site, args: argparse.Namespace) -> campaign_spec.Campaign:
    """``v6bench test KIND`` as a one-test campaign, checked like a file.
    Lab options not given are the lab's that is up, if one is (as
    ``trial`` does), else the defaults."""
    test = test_table(args)
    current = current_lab(site)
    dut = dut_table(args)
    # The tester is checked against its self-test at the test's frame sizes (measured first if missing or
    # stale); the host-stack tests send no test frames.
    sizes = test.get("frame_sizes")
    check = {"when": args.selftest, "frame_sizes": sizes} if sizes else {"when": "never"}
    lab = lab_table(args, current.table)
    d = {"name": f"test {args.kind}", "lab": lab,
         "dut": dut if dut is not None else dut_of(current.dut_for(interface.lab_spec(lab).lab_kind)),
         "selftest": check, "test": [test]}
    return campaign_spec.from_dict(d, json.dumps(d, sort_keys=True), "v6bench test")
