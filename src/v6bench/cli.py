"""The ``v6bench`` command line: parses, dispatches, prints, exits.

Exit statuses: 0 done; 2 bad input or a lab that cannot be built or used
(one line on stderr); 1 the engine or the system failed; 130 interrupted
(Ctrl-C or SIGTERM), after cleaning up.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from . import __version__, demo, engine, selftest, stopping
from .campaign import session
from .campaign import spec as campaign_spec
from .errors import UsageError, V6benchError
from .lab import control
from .lab.dut import ACL_AT, DutConfig
from .lab.mtu import Mtus
from .lab.mtu import parse as parse_mtu
from .trial.ext_headers import PRESETS as EXT_PRESETS
from .methods import registry
from .report import results as results_text
from .store import export as store_export
from .store.db import DEFAULT_PATH, Store
from .lab.cpus import ARRANGEMENTS
from .lab.site import Site
from .lab.topology import parse_topology
from .rates import format_link_speed, parse_link_speed
from .trial import request as trial_request
from .trial.mesh import PATTERNS as MESH_PATTERNS
from .trial.request import ICMP_ECHO_TARGETS
from .trial import runner, table


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def _mtu(text: str) -> Mtus:
    try:
        return parse_mtu(text)
    except UsageError as e:
        raise argparse.ArgumentTypeError(str(e).removeprefix("--mtu: ")) from None


def _icmp_echo_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--icmp-echo", choices=ICMP_ECHO_TARGETS, default=None,
                   help="send ICMP Echo Requests instead of UDP test frames, at the rate, size and mix given: "
                        "to R1's own address (dut) or through the DUT to t2, which answers (far); "
                        "replies are counted at t1, latency is the round trip")


def _lab_options(p: argparse.ArgumentParser, defaults: bool) -> None:
    p.add_argument("--topology", default="a" if defaults else None,
                   help="p2p, a (t1-r1-t2), b (t1-r1-r2-t2) or chain:N (1..5 routers)" + (" [a]" if defaults else ""))
    p.add_argument("--link-speed", default="1G" if defaults else None,
                   help="nominal link speed for %% of line rate: 100M, 1G, 10G" + (" [1G]" if defaults else ""))
    p.add_argument("--mtu", type=_mtu, default=Mtus() if defaults else None, metavar="BYTES|LINK=BYTES,…",
                   help="IP MTU of every lab link, or per link: r1-r2=500, all=9000,r1-r2=1280 (lab/mtu.py); "
                        "IPv4 is fragmented by the routers, IPv6 at the source" + (" [1500]" if defaults else ""))
    p.add_argument("--cpu-arrangement", choices=ARRANGEMENTS, default=None,
                   help="split: DUT on its own CPU(s), CPU measured; inline: all in the sender (docs/architecture.md) [split on 2+ CPUs]")
    p.add_argument("--dut-limit", type=int, default=None, metavar="FPS",
                   help="a DUT of known capacity: R1 drops above FPS frames/s per direction (nftables limit) [none]")
    p.add_argument("--acl", choices=("none", "1", "25"), default=None,
                   help="access lists in R1, one per IP version: 1 permit rule, or 24 denies and the permit last "
                        "(seed 000 §3) [none]")
    p.add_argument("--acl-at", choices=ACL_AT, default=None,
                   help="where the ACL filters: in (R1's input port), out (its output port), both [in]")
    p.add_argument("--acl-udp-only", action="store_true", default=None,
                   help="the ACL permits only UDP: IPv6 frames are walked to their transport header")
    p.add_argument("--nat44", action="store_true", default=None,
                   help="IPv4 source NAT on R1 toward t2 (IPv6 forwarded as before)")
    p.add_argument("--tunnel", choices=("4in6", "6in4"), default=None,
                   help="topology b: IPv4 in IPv6 (SRv6 encap) or IPv6 in IPv4 (VXLAN) between R1 and R2 [none]")
    p.add_argument("--shape", action="store_true", default=None,
                   help="shape every router interface to the link speed (L1), so converging traffic congests")


def _selftest_option(p: argparse.ArgumentParser) -> None:
    default = os.environ.get("V6BENCH_SELFTEST", "if-stale")
    p.add_argument("--selftest", choices=selftest.WHEN, default=default,
                   help="measure the tester first (its capacity and latency floor, stored in --db): when the stored "
                        "self-test is missing or stale (other kernel, engine, CPU arrangement, MTU), always, or never "
                        f"[$V6BENCH_SELFTEST or if-stale: {default}]")


def _db_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", default=str(DEFAULT_PATH), help=f"results database [{DEFAULT_PATH}]")


def _list(text: str, what: str) -> list[str]:
    items = [x.strip() for x in text.split(",") if x.strip()]
    if not items:
        raise UsageError(f"{what}: give a comma-separated list")
    return items


def parser() -> argparse.ArgumentParser:
    p = _Parser(prog="v6bench", description="Benchmark what IPv6 costs a router (RFC 2544, 5180, 8219).")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    lab = sub.add_parser("lab", help="build, show or remove the emulated lab")
    lab_sub = lab.add_subparsers(dest="lab_command", required=True, parser_class=_Parser)
    up = lab_sub.add_parser("up", help="build the lab (one per machine)")
    _lab_options(up, defaults=True)
    up.add_argument("--json", action="store_true", help="print the lab as JSON")
    st = lab_sub.add_parser("status", help="show the lab that is up")
    st.add_argument("--json", action="store_true", help="print the lab as JSON")
    lab_sub.add_parser("down", help="remove the lab and anything a crashed run left")

    tr = sub.add_parser("trial", help="run one trial on the lab that is up, or on a temporary one")
    tr.add_argument("--mix", default="50/50", help="IPv4/IPv6 percentages of frames, e.g. 100/0, 90/10, 0/100 [50/50]")
    tr.add_argument("--frame-size", type=int, default=128, help="bytes incl. FCS; IPv6 needs 84 or more [128]")
    tr.add_argument("--rate", default="10%",
                    help="per direction: 20000fps, 20kpps, 50%% (of line, L1), 30Mbps (L1), 30Mbps:l2 [10%%]")
    tr.add_argument("--duration", type=float, default=10.0, help="traffic seconds [10]")
    tr.add_argument("--bidirectional", action="store_true", help="the same rate each way (RFC 2544 §14)")
    _icmp_echo_option(tr)
    tr.add_argument("--ext-headers", choices=EXT_PRESETS, default=None,
                    help="IPv6 extension headers in every IPv6 frame, frame size kept (docs/methods.md) [none]")
    tr.add_argument("--mesh", choices=list(MESH_PATTERNS), default=None,
                    help="mesh traffic among the testers of a mesh:N topology, --rate per sending port: "
                         + "; ".join(f"{k}: {v}" for k, v in MESH_PATTERNS.items()))
    tr.add_argument("--json", action="store_true", help="print the result as JSON")
    _selftest_option(tr)
    _db_option(tr)
    _lab_options(tr, defaults=False)

    de = sub.add_parser("demo", help="IPv4 against IPv6 on the emulated lab: throughput and latency")
    de.add_argument("--frame-sizes", default="128,512,1518", help="comma-separated bytes [128,512,1518]")
    de.add_argument("--trial-duration", type=float, default=1.0, help="seconds per search trial [1]")
    de.add_argument("--json", action="store_true", help="print the results as JSON")

    te = sub.add_parser("test", help="run one RFC test over mixes and frame sizes, recorded in the results database")
    te.add_argument("kind", choices=list(registry.KINDS), help="; ".join(f"{k}: {v.summary}" for k, v in registry.KINDS.items()))
    te.add_argument("--mix", default="100/0,0/100", help="comma-separated IPv4/IPv6 mixes [100/0,0/100]")
    te.add_argument("--frame-size", default=None, help="comma-separated frame sizes, bytes incl. FCS [128]")
    te.add_argument("--trial-duration", "--duration", dest="trial_duration", type=float, default=None,
                    help="seconds per trial [60 for throughput and loss, 120 latency, 30 mesh]")
    te.add_argument("--search", choices=("binary", "mlr"), default=None, help="throughput search [binary]")
    te.add_argument("--resolution", type=float, default=None, help="relative resolution of searches [0.01]")
    te.add_argument("--pdr-loss-ratio", type=float, default=None, help="loss ratio goal of the PDR [0.005]")
    te.add_argument("--loads", default=None, help="latency: loads such as throughput,50%%,10kpps; loss: percentages 10,50,95")
    te.add_argument("--kinds", default=None, help="reset: soft,hard [both]")
    te.add_argument("--protocol", default=None, help="stack-throughput: tcp,udp [both]")
    te.add_argument("--message-size", default=None,
                    help="stack-throughput: comma-separated bytes per write or datagram [64,256,1024,1408,16384,65507]")
    te.add_argument("--payload-size", default=None,
                    help="rr-latency: comma-separated IP payload bytes (UDP header and data), 'mtu' for the largest "
                         "the path carries whole [8,16,32,64,128,256,512,1024,mtu]")
    te.add_argument("--pattern", choices=list(MESH_PATTERNS), default=None, help="mesh: full or partial [partial]")
    te.add_argument("--rate", default=None, help="mesh: comma-separated loads per sending port, e.g. 10%%,50%%,20kpps "
                                                 "[10%%,25%%,50%%,75%%,100%%]")
    te.add_argument("--bidirectional", action="store_true", help="the same rate each way (RFC 2544 §14)")
    te.add_argument("--repeat", type=int, default=None,
                    help="repetitions (inside the test for latency, back-to-back, recovery, reset; of the test otherwise) "
                         "[what a verdict needs where the report compares, in 5 interleaved blocks: 5 searches, "
                         "5 resets, latency's 20 trials as 4 a block; 1 otherwise]")
    te.add_argument("--drain", type=float, default=2.0, help="seconds to wait for late frames after each trial [2]")
    te.add_argument("--ext-headers", choices=EXT_PRESETS, default=None,
                    help="IPv6 extension headers in every IPv6 frame, frame size kept (docs/methods.md) [none]")
    _icmp_echo_option(te)
    te.add_argument("--json", action="store_true", help="print the results as JSON")
    _selftest_option(te)
    _db_option(te)
    _lab_options(te, defaults=False)

    ru = sub.add_parser("run", help="run a campaign file (TOML) with a progress bar; --resume continues an interrupted run")
    ru.add_argument("file", help="campaign file, e.g. campaigns/quick.toml")
    ru.add_argument("--resume", action="store_true", help="continue the last unfinished run of this file")
    ru.add_argument("--json", action="store_true", help="print the run's results as JSON at the end")
    _db_option(ru)

    se = sub.add_parser("selftest", help="measure the tester itself on p2p: capacity and latency floor")
    se.add_argument("--frame-size", default="64,128,512,1518", help="comma-separated bytes [64,128,512,1518]")
    se.add_argument("--cpu-arrangement", choices=ARRANGEMENTS, default=None, help="as for lab up")
    se.add_argument("--json", action="store_true", help="print the result as JSON")
    _db_option(se)

    rs = sub.add_parser("results", help="list, show or export stored runs")
    rs_sub = rs.add_subparsers(dest="results_command", required=True, parser_class=_Parser)
    rl = rs_sub.add_parser("list", help="every run in the database")
    _db_option(rl)
    rl.add_argument("--json", action="store_true")
    rsh = rs_sub.add_parser("show", help="one run: environment and every test")
    rsh.add_argument("run", nargs="?", type=int, help="run id [latest]")
    rsh.add_argument("--json", action="store_true")
    _db_option(rsh)
    rex = rs_sub.add_parser("export", help="one run as csv, json or parquet")
    rex.add_argument("run", nargs="?", type=int, help="run id [latest]")
    rex.add_argument("--format", choices=store_export.FORMATS, default="json")
    rex.add_argument("--out", default="-", help="file to write [stdout]")
    _db_option(rex)

    rp = sub.add_parser("report", help="write a run's report: one offline HTML file, SVG/PNG figures, CSV tables")
    rp.add_argument("run", nargs="?", type=int, help="run id [latest]")
    rp.add_argument("--out", default=None, help="directory to write into [results/reports/run-N beside the database]")
    rp.add_argument("--no-figure-files", action="store_true", help="skip the SVG/PNG files (the HTML report has every chart)")
    _db_option(rp)

    sub.add_parser("version", help="print the versions of v6bench and its engine")
    return p


def _status_json(lab, busy: bool) -> dict:
    if lab is None:
        return {"up": False, "busy": busy, "topology": None, "nodes": []}
    return {
        "up": True, "busy": busy, "topology": lab.topology, "link_speed_bps": lab.link_speed_bps, "mtu": lab.mtu.to_json(),
        "temporary": lab.temporary, "created_at_unix_s": lab.created_at_unix_s, "cpu_plan": lab.cpu_plan.to_json(),
        "nodes": list(lab.nodes), "napi_threads": list(lab.napi),
    }


def _status_text(lab, busy: bool) -> str:
    if lab is None:
        return "no lab is up" + (" (a v6bench command is building or using one)" if busy else "")
    lines = [f"lab up: {control.describe(lab)}, MTU {lab.mtu}" + (" (temporary, in use)" if lab.temporary else "")
             + (" (busy)" if busy and not lab.temporary else "")]
    for n in lab.nodes:
        for i in n["interfaces"]:
            owner = " (engine)" if i.get("addresses_owner") == "engine" else ""
            lines.append(f"  {n['name']:<3} {n['role']:<6} {n['netns']:<10} {i['name']:<6} {i['mac']}  {i['ipv4']:<16} {i['ipv6']}{owner}")
    return "\n".join(lines)


def _run(args: argparse.Namespace) -> int:
    site = Site.from_env()
    if getattr(args, "selftest", None) not in (None, *selftest.WHEN):
        raise UsageError(f"V6BENCH_SELFTEST: {args.selftest!r} is not one of {', '.join(selftest.WHEN)}")
    if args.command == "version":
        print(json.dumps({"v6bench": __version__, **engine.version()}))
        return 0
    if args.command == "lab":
        if args.lab_command == "up":
            lab = control.up(site, args.topology, parse_link_speed(args.link_speed), args.mtu, args.cpu_arrangement,
                             _dut(args) or DutConfig())
            print(json.dumps(_status_json(lab, False), indent=1) if args.json else _status_text(lab, False))
        elif args.lab_command == "status":
            lab, busy = control.status(site)
            print(json.dumps(_status_json(lab, busy), indent=1) if args.json else _status_text(lab, busy))
        else:
            removed = control.down(site)
            print(f"removed {', '.join(removed)}" if removed else "no lab was up")
        return 0
    if args.command == "trial":
        req = trial_request.make_request(args.mix, args.frame_size, args.rate, args.duration, args.bidirectional,
                                         args.ext_headers, args.icmp_echo, args.mesh)
        link = parse_link_speed(args.link_speed) if args.link_speed else None
        if args.topology:
            parse_topology(args.topology)  # bad input before any privileged work
        st = None
        if args.selftest != "never" or os.path.exists(args.db):  # `never` creates no database
            with Store(args.db) as store:
                st = selftest.ensure(site, store, args.selftest, (req.frame_size,), (req.frame_size,),
                                     (args.mtu or Mtus()).largest, args.cpu_arrangement, _say)
        with control.for_trial(site, args.topology, link, args.mtu, args.cpu_arrangement, _dut(args)) as lab:
            result = runner.run(lab, req, site.engine_pid_file, selftest=st[1] if st else None)
        print(json.dumps(result, indent=1) if args.json else table.render(result))
        return 0
    if args.command == "demo":
        return demo.main(site, args.frame_sizes, args.trial_duration, args.json)
    if args.command == "test":
        c = _test_campaign(args)
        with Store(args.db) as store:
            run_id = session.run(site, c, store, False, " ".join(["v6bench", *sys.argv[1:]]))
            return _print_run(store, run_id, args.json)
    if args.command == "run":
        c = campaign_spec.load(args.file)
        with Store(args.db) as store:
            run_id = session.run(site, c, store, args.resume, " ".join(["v6bench", *sys.argv[1:]]))
            return _print_run(store, run_id, args.json)
    if args.command == "selftest":
        sizes = campaign_spec.frame_sizes(_sizes(args.frame_size, "--frame-size"), "--frame-size")
        result = selftest.run(site, sizes, args.cpu_arrangement, _say)
        with Store(args.db) as store:
            sid = store.add_selftest(result["environment"], result)
        print(json.dumps({"selftest_id": sid, **result}, indent=1) if args.json else f"self-test {sid} stored in {args.db}")
        return 0
    if args.command == "report":
        return _report(args)
    if args.command == "results":
        with Store(args.db) as store:
            if args.results_command == "list":
                runs = store.runs()
                print(json.dumps(runs, indent=1) if args.json else results_text.runs_table(runs))
                return 0
            run_id = args.run if args.run is not None else store.latest_run_id()
            if run_id is None:
                raise UsageError(f"RUN: {args.db} holds no run yet")
            if args.results_command == "show":
                return _print_run(store, run_id, args.json)
            store.run(run_id)  # exists?
            if args.out == "-":
                store_export.export(store, run_id, args.format, sys.stdout.buffer)
            else:
                with open(args.out, "wb") as f:
                    store_export.export(store, run_id, args.format, f)
                print(f"run {run_id} written to {args.out} ({args.format})", file=sys.stderr)
            return 0
    raise AssertionError(args.command)


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _dut(args: argparse.Namespace) -> DutConfig | None:
    """The DUT options given, as a configuration; None if none was given."""
    given = (args.dut_limit, args.acl, args.acl_at, args.acl_udp_only, args.nat44, args.shape, args.tunnel)
    if all(x is None for x in given):
        return None
    if args.dut_limit is not None and args.dut_limit < 0:
        raise UsageError("--dut-limit: give frames/s, 0 for none")
    acl = 0 if args.acl in (None, "none") else int(args.acl)
    if acl == 0 and (args.acl_at or args.acl_udp_only):
        raise UsageError("--acl-at and --acl-udp-only need --acl 1 or 25")
    return DutConfig(limit_fps=args.dut_limit or 0, acl=acl, acl_at=args.acl_at or "in", acl_udp_only=bool(args.acl_udp_only),
                     nat44=bool(args.nat44), shape=bool(args.shape), tunnel=args.tunnel or "")


def _sizes(text: str, what: str) -> list[int]:
    out = []
    for x in _list(text, what):
        try:
            out.append(int(x))
        except ValueError:
            raise UsageError(f"{what}: {x!r} is not a whole number of bytes") from None
    return out


def _test_campaign(args: argparse.Namespace) -> campaign_spec.Campaign:
    """``v6bench test KIND`` as a one-test campaign (checked like a file)."""
    k = registry.kind(args.kind)
    if isinstance(k, registry.HostKind):
        return _as_campaign(args, _host_test(args))
    fields = set(k.params.__dataclass_fields__)
    test: dict = {"kind": args.kind, "mixes": _list(args.mix, "--mix"), "frame_sizes": _sizes(args.frame_size or "128", "--frame-size"),
                  "directions": ["bi" if args.bidirectional else "uni"], "drain_s": args.drain}
    if args.ext_headers:
        test["ext_headers"] = args.ext_headers
    if args.icmp_echo:
        test["icmp_echo"] = args.icmp_echo
    search: dict = {}
    for option, key, value in (("--trial-duration", "trial_duration_s", args.trial_duration), ("--search", "search", args.search),
                               ("--resolution", "resolution", args.resolution),
                               ("--pdr-loss-ratio", "pdr_loss_ratio", args.pdr_loss_ratio)):
        if value is None:
            continue
        if key in fields:
            test[key] = value
        if args.kind not in ("throughput", "loss"):  # the search these kinds may start with
            search[key] = value
        elif key not in fields:
            raise UsageError(f"{option}: does not apply to {args.kind}")
    if args.repeat is not None:
        test["repeat"] = args.repeat
    if args.loads is not None:
        if args.kind == "latency":
            test["loads"] = _list(args.loads, "--loads")
        elif args.kind == "loss":
            try:
                test["loads_pct"] = [float(x.rstrip("%")) for x in _list(args.loads, "--loads")]
            except ValueError:
                raise UsageError("--loads: loss takes percentages of line rate, e.g. 10,50,95") from None
        else:
            raise UsageError(f"--loads: does not apply to {args.kind}")
    for option, key, value in (("--pattern", "pattern", args.pattern), ("--rate", "loads", args.rate)):
        if value is None:
            continue
        if args.kind != "mesh":
            raise UsageError(f"{option}: only mesh takes it")
        test[key] = _list(value, option) if key == "loads" else value
    if args.kinds is not None:
        if args.kind != "reset":
            raise UsageError("--kinds: only reset has kinds")
        test["kinds"] = _list(args.kinds, "--kinds")
    for option in ("--protocol", "--message-size", "--payload-size"):
        if getattr(args, option[2:].replace("-", "_")) is not None:
            raise UsageError(f"{option}: only the host-stack tests (stack-throughput, rr-latency) take it")
    if search and args.kind != "throughput":
        test["throughput_search"] = search
    return _as_campaign(args, test)


def _host_test(args: argparse.Namespace) -> dict:
    """The [[test]] of ``v6bench test stack-throughput`` or ``rr-latency``."""
    test: dict = {"kind": args.kind, "mixes": _list(args.mix, "--mix")}
    given = {"--frame-size": args.frame_size, "--bidirectional": args.bidirectional, "--loads": args.loads,
             "--search": args.search, "--resolution": args.resolution, "--pdr-loss-ratio": args.pdr_loss_ratio,
             "--kinds": args.kinds, "--pattern": args.pattern, "--rate": args.rate, "--ext-headers": args.ext_headers,
             "--icmp-echo": args.icmp_echo}
    for option, value in given.items():
        if value:
            raise UsageError(f"{option}: does not apply to {args.kind}, which uses the hosts' own stacks")
    if args.trial_duration is not None:
        test["duration_s"] = args.trial_duration
    if args.repeat is not None:
        test["repeat"] = args.repeat
    if args.kind == "stack-throughput":
        if args.payload_size is not None:
            raise UsageError("--payload-size: rr-latency's; stack-throughput takes --message-size")
        if args.protocol is not None:
            test["protocols"] = _list(args.protocol, "--protocol")
        if args.message_size is not None:
            test["message_sizes"] = _sizes(args.message_size, "--message-size")
    else:
        if args.protocol is not None or args.message_size is not None:
            raise UsageError("--protocol/--message-size: stack-throughput's; rr-latency takes --payload-size")
        if args.payload_size is not None:
            items = _list(args.payload_size, "--payload-size")
            sizes = [x for x in items if x != "mtu"]
            test["mtu_payload"] = "mtu" in items
            test["payload_sizes"] = _sizes(",".join(sizes), "--payload-size") if sizes else []
    return test


def _as_campaign(args: argparse.Namespace, test: dict) -> campaign_spec.Campaign:
    """The one-test campaign. Lab options not given are the lab's that is
    up, if one is (as ``trial`` does), else the defaults."""
    current, _ = control.status(Site.from_env())
    lab: dict = {"topology": args.topology or (current.topology if current else "a"),
                 "link_speed": args.link_speed or (format_link_speed(current.link_speed_bps) if current else "1G"),
                 "mtu": (args.mtu or (current.mtu if current else Mtus())).to_json()}
    if args.cpu_arrangement:
        lab["cpu_arrangement"] = args.cpu_arrangement
    dut = _dut(args) or (current.dut_config if current else DutConfig())
    # The tester is checked against its self-test at the test's frame sizes (measured first if missing or
    # stale); the host-stack tests send no test frames.
    sizes = test.get("frame_sizes")
    check = {"when": args.selftest, "frame_sizes": sizes} if sizes else {"when": "never"}
    d = {"name": f"test {args.kind}", "lab": lab, "dut": dut.to_json(), "selftest": check, "test": [test]}
    return campaign_spec.from_dict(d, json.dumps(d, sort_keys=True), "v6bench test")


def _report(args: argparse.Namespace) -> int:
    from pathlib import Path

    from .report import build  # matplotlib: loaded only for reports

    if not Path(args.db).exists():
        raise UsageError(f"--db: {args.db} does not exist (run a campaign first: v6bench run campaigns/quick.toml)")
    with Store(args.db) as store:
        run_id = args.run if args.run is not None else store.latest_run_id()
        if run_id is None:
            raise UsageError(f"RUN: {args.db} holds no run yet")
        out = Path(args.out) if args.out else build.default_dir(store, run_id)
        written = build.write(store, run_id, out, figures=not args.no_figure_files)
    print(f"report of run {run_id}: {written['html']} ({written['figures']} figures, {written['tables']} tables; "
          f"files in {out}/figures and {out}/tables)")
    return 0


def _print_run(store: Store, run_id: int, as_json: bool) -> int:
    if as_json:
        data = store_export.as_json(store, run_id)
        for t in data["tests"]:
            t.pop("trials")
        print(json.dumps(data, indent=1, default=str))
    else:
        print(results_text.run_text(store.run(run_id), store.tests(run_id)))
    return 0


def main(argv: list[str] | None = None) -> int:
    stopping.install()
    args = parser().parse_args(argv)
    try:
        return _run(args)
    except V6benchError as e:
        print(f"v6bench: error: {e}", file=sys.stderr)
        return e.exit_status
    except engine.EngineError as e:
        print(f"v6bench: error: engine: {e}", file=sys.stderr)
        return 2 if e.bad_input else 1
    except KeyboardInterrupt:
        print("v6bench: interrupted; the lab's temporary parts were removed", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
