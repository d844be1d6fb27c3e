"""The ``v6bench`` command line: parses, dispatches, prints, exits.

Exit statuses: 0 done; 2 bad input or a lab that cannot be built or used
(one line on stderr); 1 the engine or the system failed; 130 interrupted
(Ctrl-C or SIGTERM), after cleaning up.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys

from . import __version__, demo, engine
from .errors import V6benchError
from .lab import control
from .lab.cpus import ARRANGEMENTS
from .lab.site import Site
from .lab.topology import parse_topology
from .rates import parse_link_speed
from .trial import request as trial_request
from .trial import runner, table


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def _lab_options(p: argparse.ArgumentParser, defaults: bool) -> None:
    p.add_argument("--topology", default="a" if defaults else None,
                   help="p2p, a (t1-r1-t2), b (t1-r1-r2-t2) or chain:N (1..5 routers)" + (" [a]" if defaults else ""))
    p.add_argument("--link-speed", default="1G" if defaults else None,
                   help="nominal link speed for %% of line rate: 100M, 1G, 10G" + (" [1G]" if defaults else ""))
    p.add_argument("--mtu", type=int, default=1500 if defaults else None,
                   help="MTU of every lab link, bytes" + (" [1500]" if defaults else ""))
    p.add_argument("--cpu-arrangement", choices=ARRANGEMENTS, default=None,
                   help="split: DUT on its own CPU(s), CPU measured; inline: all in the sender (docs/architecture.md) [split on 2+ CPUs]")


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
    tr.add_argument("--json", action="store_true", help="print the result as JSON")
    _lab_options(tr, defaults=False)

    de = sub.add_parser("demo", help="IPv4 against IPv6 on the emulated lab: throughput and latency")
    de.add_argument("--frame-sizes", default="128,512,1518", help="comma-separated bytes [128,512,1518]")
    de.add_argument("--trial-duration", type=float, default=1.0, help="seconds per search trial [1]")
    de.add_argument("--json", action="store_true", help="print the results as JSON")

    sub.add_parser("version", help="print the versions of v6bench and its engine")
    return p


def _status_json(lab, busy: bool) -> dict:
    if lab is None:
        return {"up": False, "busy": busy, "topology": None, "nodes": []}
    return {
        "up": True, "busy": busy, "topology": lab.topology, "link_speed_bps": lab.link_speed_bps, "mtu": lab.mtu,
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
    if args.command == "version":
        print(json.dumps({"v6bench": __version__, **engine.version()}))
        return 0
    if args.command == "lab":
        if args.lab_command == "up":
            lab = control.up(site, args.topology, parse_link_speed(args.link_speed), args.mtu, args.cpu_arrangement)
            print(json.dumps(_status_json(lab, False), indent=1) if args.json else _status_text(lab, False))
        elif args.lab_command == "status":
            lab, busy = control.status(site)
            print(json.dumps(_status_json(lab, busy), indent=1) if args.json else _status_text(lab, busy))
        else:
            removed = control.down(site)
            print(f"removed {', '.join(removed)}" if removed else "no lab was up")
        return 0
    if args.command == "trial":
        req = trial_request.make_request(args.mix, args.frame_size, args.rate, args.duration, args.bidirectional)
        link = parse_link_speed(args.link_speed) if args.link_speed else None
        if args.topology:
            parse_topology(args.topology)  # bad input before any privileged work
        with control.for_trial(site, args.topology, link, args.mtu, args.cpu_arrangement) as lab:
            result = runner.run(lab, req, site.engine_pid_file)
        print(json.dumps(result, indent=1) if args.json else table.render(result))
        return 0
    if args.command == "demo":
        return demo.main(site, args.frame_sizes, args.trial_duration, args.json)
    raise AssertionError(args.command)


_MAIN_PID = os.getpid()


def _sigterm(signum, frame):  # noqa: ARG001
    """SIGTERM/SIGHUP stop the command like Ctrl-C, so cleanup runs. A forked
    helper (pyroute2 forks to enter namespaces and ends its helpers with
    SIGTERM) inherits this handler: it must just exit, never unwind into
    the command's cleanup."""
    if os.getpid() != _MAIN_PID:
        os._exit(128 + signum)
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    global _MAIN_PID
    _MAIN_PID = os.getpid()
    signal.signal(signal.SIGTERM, _sigterm)
    signal.signal(signal.SIGHUP, _sigterm)
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
