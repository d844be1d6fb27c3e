"""``v6bench compare`` and ``v6bench trend``: runs against each other (docs/compare.md)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..core.errors import UsageError
from ..lab.model.site import Site
from ..report.attributes import ATTRIBUTES
from ..store.db import Store
from . import render
from .options import Options, add_db, add_json


def add(sub: argparse._SubParsersAction, parser_class: type) -> None:
    co = Options(sub.add_parser("compare", help="runs against each other: each run's effects, pooled across runs and "
                                                "machines; with two runs also before/after, metric by metric"))
    co.parser.add_argument("runs", nargs="+", type=int, metavar="RUN", help="run ids (two or more; `results list`)")
    co.parser.add_argument("--by", choices=ATTRIBUTES, default=None,
                           help="a run attribute as moderator: does it explain the runs' differences?")
    co.parser.add_argument("--only", default=None, metavar="TEXT",
                           help="only comparisons whose name contains TEXT (e.g. 'median latency', 'cost per frame')")
    co.parser.add_argument("--report", default=None, metavar="DIR", help="also write an HTML report (forests by run) into DIR")
    add_json(co, "the comparisons")
    add_db(co)
    co.parser.set_defaults(command_run=run_compare)

    tr = Options(sub.add_parser("trend", help="one campaign's comparisons over its runs in time order, with change points"))
    tr.parser.add_argument("campaign", help="the campaign's name (as `results list` shows it)")
    tr.parser.add_argument("--only", default=None, metavar="TEXT", help="only comparisons whose name contains TEXT")
    tr.parser.add_argument("--report", default=None, metavar="DIR", help="also write an HTML report into DIR")
    add_json(tr, "the trends")
    add_db(tr)
    tr.parser.set_defaults(command_run=run_trend)


def _ids(store: Store, runs: list[int]) -> list[int]:
    if len(set(runs)) < 2:
        raise UsageError("give two or more different runs (see `v6bench results list`)", "runs")
    for r in runs:
        store.run(r)  # exists?
    return list(dict.fromkeys(runs))


def run_compare(site: Site, args: argparse.Namespace, say) -> int:
    from ..report import across, change  # scipy and statsmodels: loaded only here

    with Store(args.db) as store:
        ids = _ids(store, args.runs)
        say(f"reading {len(ids)} runs from {store.where} …")
        a = across.collect(store, ids)
        pooled = across.select(across.pool(a, args.by), args.only)
        ba = change.compare(store, ids[0], ids[1]) if len(ids) == 2 else None
        if ba is not None and args.only:
            ba = change.BeforeAfter(ba.before, ba.after, ba.same_machine, ba.same_campaign, ba.repeats,
                                    tuple(c for c in ba.changes if args.only.lower() in f"{c.metric} {c.point} {c.series}".lower()),
                                    ba.short)
        if args.report:
            from ..report import build
            from ..report.views import across as views

            secs = [views.pooled_section(pooled, a.runs)] + ([views.change_section(ba)] if ba else [])
            w = build.write_sections(secs, Path(args.report), f"v6bench: runs {', '.join(map(str, ids))} compared",
                                     f"{len(ids)} runs from {store.where}")
            say(f"report: {w['html']} ({w['figures']} figures, {w['tables']} tables)")
    if args.json:
        print(json.dumps(render.compare_json(a, pooled, ba), indent=1, default=str))
    else:
        print(render.compare_text(a, pooled, ba))
    return 0


def run_trend(site: Site, args: argparse.Namespace, say) -> int:
    from ..report import trend

    with Store(args.db) as store:
        ids = trend.runs_of(store, args.campaign)
        if len(ids) < 2:
            raise UsageError(f"{store.where} holds {len(ids)} finished run(s) of {args.campaign!r}; a trend needs two or more",
                             "campaign")
        trends = [t for t in trend.trends(store, args.campaign) if not args.only or args.only.lower() in t.name.lower()]
        runs = {i: store.run(i) for i in ids}
        if args.report:
            from ..report import build
            from ..report.views import across as views

            w = build.write_sections([views.trend_section(args.campaign, trends, runs)], Path(args.report),
                                     f"v6bench: trend of {args.campaign}", f"{len(ids)} runs from {store.where}")
            say(f"report: {w['html']} ({w['figures']} figures, {w['tables']} tables)")
    if args.json:
        print(json.dumps([{"comparison": t.name, "verdict": t.verdict, "machine_changes_before_runs":
                           [t.runs[i].run_id for i in t.machine_changes],
                           "change_point_before_run": t.runs[t.change_at].run_id if t.change_at is not None else None,
                           "runs": [render.effect_json(e) for e in t.runs]} for t in trends], indent=1, default=str))
    else:
        print(render.trend_text(trends))
    return 0
