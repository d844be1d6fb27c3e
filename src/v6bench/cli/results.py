"""``v6bench results``, ``report``, ``selftest`` and ``version``: what is stored, and the tester itself."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .. import __version__, engine, selftest
from ..campaign import spec as campaign_spec
from ..core.errors import UsageError
from ..lab.model.cpus import ARRANGEMENTS
from ..lab.model.site import Site
from ..store import export as store_export
from ..store import merge
from ..store.connection import is_url
from ..store.db import Store
from . import render
from .options import Options, add_db, add_json, value


def add(sub: argparse._SubParsersAction, parser_class: type) -> None:
    se = Options(sub.add_parser("selftest", help="measure the tester itself on p2p: capacity and latency floor"))
    se.parser.add_argument("--frame-size", dest="frame_sizes", default="64,128,512,1518",
                           help="comma-separated bytes [64,128,512,1518]")
    se.flags["frame_sizes"] = "--frame-size"
    se.parser.add_argument("--cpu-arrangement", choices=ARRANGEMENTS, default=None, help="as for lab up")
    add_json(se, "the result")
    add_db(se)
    se.parser.set_defaults(command_run=run_selftest)

    rs = sub.add_parser("results", help="list, show, export, import or upgrade stored runs")
    rs_sub = rs.add_subparsers(dest="results_command", required=True, parser_class=parser_class)
    rl = Options(rs_sub.add_parser("list", help="every run in the database"))
    add_db(rl)
    add_json(rl, "the runs")
    rsh = Options(rs_sub.add_parser("show", help="one run: environment and every test"))
    rsh.parser.add_argument("run", nargs="?", type=int, help="run id [latest]")
    add_json(rsh, "the run")
    add_db(rsh)
    ri = Options(rs_sub.add_parser("import", help="merge other stores' finished runs into this one (SQLite files, "
                                                  "schema version 1 or 2; a run already here is not stored again)"))
    ri.parser.add_argument("files", nargs="+", metavar="FILE", help="SQLite result files to import (read, never written)")
    add_db(ri)
    ru = Options(rs_sub.add_parser("upgrade", help="upgrade an SQLite store of schema version 1 in place"))
    add_db(ru)
    rex = Options(rs_sub.add_parser("export", help="one run as csv, json or parquet"))
    rex.parser.add_argument("run", nargs="?", type=int, help="run id [latest]")
    rex.parser.add_argument("--format", choices=store_export.FORMATS, default="json")
    rex.parser.add_argument("--out", default="-", help="file to write [stdout]")
    add_db(rex)
    rs.set_defaults(command_run=run_results)

    rp = Options(sub.add_parser("report", help="write a run's report: one offline HTML file, SVG/PNG figures, CSV tables"))
    rp.parser.add_argument("run", nargs="?", type=int, help="run id [latest]")
    rp.parser.add_argument("--out", default=None, help="directory to write into [results/reports/run-N beside the database]")
    rp.parser.add_argument("--no-figure-files", action="store_true",
                           help="skip the SVG/PNG files (the HTML report has every chart)")
    add_db(rp)
    rp.parser.set_defaults(command_run=run_report)

    sub.add_parser("version", help="print the versions of v6bench and its engine").set_defaults(command_run=run_version)


def run_version(site: Site, args: argparse.Namespace, say) -> int:
    print(json.dumps({"v6bench": __version__, **engine.version()}))
    return 0


def run_selftest(site: Site, args: argparse.Namespace, say) -> int:
    sizes = campaign_spec.frame_sizes(value(tuple[int, ...], args.frame_sizes, "frame_sizes"), ("frame_sizes",))
    result = selftest.run(site, sizes, args.cpu_arrangement, say)
    with Store(args.db) as store:
        sid = store.add_selftest(result["environment"], result)
        where = store.where
    print(json.dumps({"selftest_id": sid, **result}, indent=1) if args.json else f"self-test {sid} stored in {where}")
    return 0


def _run_id(store: Store, args: argparse.Namespace) -> int:
    run_id = args.run if args.run is not None else store.latest_run_id()
    if run_id is None:
        raise UsageError(f"{store.where} holds no run yet", "run")
    store.run(run_id)  # exists?
    return run_id


def run_results(site: Site, args: argparse.Namespace, say) -> int:
    if args.results_command == "upgrade":
        if is_url(args.db):
            raise UsageError("a PostgreSQL store is made at schema version 2; only SQLite files are upgraded", "db")
        print(merge.upgrade(Path(args.db)))
        return 0
    with Store(args.db) as store:
        if args.results_command == "import":
            for f in args.files:
                print(merge.import_file(store, Path(f)).summary())
            return 0
        if args.results_command == "list":
            runs = store.runs()
            print(json.dumps(render.runs_json(runs), indent=1) if args.json else render.runs(runs))
            return 0
        run_id = _run_id(store, args)
        if args.results_command == "show":
            print(render.run(store, run_id, args.json))
        elif args.out == "-":
            store_export.export(store, run_id, args.format, sys.stdout.buffer)
        else:
            with open(args.out, "wb") as f:
                store_export.export(store, run_id, args.format, f)
            say(f"run {run_id} written to {args.out} ({args.format})")
    return 0


def run_report(site: Site, args: argparse.Namespace, say) -> int:
    from ..report import build  # matplotlib: loaded only for reports

    if not is_url(args.db) and not Path(args.db).exists():
        raise UsageError(f"{args.db} does not exist (run a campaign first: v6bench run campaigns/quick.toml)", "db")
    with Store(args.db) as store:
        run_id = _run_id(store, args)
        out = Path(args.out) if args.out else build.default_dir(store, run_id)
        written = build.write(store, run_id, out, figures=not args.no_figure_files)
    print(f"report of run {run_id}: {written['html']} ({written['figures']} figures, {written['tables']} tables; "
          f"files in {out}/figures and {out}/tables)")
    return 0
