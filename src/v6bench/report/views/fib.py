"""The DUT's cost per frame and throughput against the size of its
forwarding table (RFC 3222 §3.4: FIB-dependent throughput and latency),
per family: each family's point at the number of routes of its own
family the routers held (the lab's ``fib`` record, lab/emulated/fib_load.py), so
the internet table puts IPv4 at 1 M routes and IPv6 at 230 k. Tests on a
lab without a table are not drawn here."""

from __future__ import annotations

from ..data import RunData, TestData
from ..group import by, median
from ..model import Figure, Section, Series, Table
from ..samples import load_trials, trial_runs_cost_ns


def routes(t: TestData) -> dict[int, int] | None:
    """Routes a family in the test's routers (the first router's count; every router holds the same table)."""
    for x in t.trials:
        fib = (((x.get("result") or {}).get("lab")) or {}).get("fib")
        if fib and fib.get("routers"):
            r = next(iter(fib["routers"].values()))
            return {4: r["ipv4_routes"], 6: r["ipv6_routes"]}
    return None


def fib_scale(data: RunData) -> Section | None:
    cost: dict[tuple[int, int], list[float]] = {}
    ndr: dict[tuple[int, int], list[float]] = {}
    names: dict[tuple[int, int], str] = {}
    for t in data.of("latency"):
        n = routes(t)
        if n is None or t.family is not None:
            continue
        for row in t.result["loads"]:
            for trial in load_trials(t, row):
                c = trial_runs_cost_ns(trial) or {}
                for v in (4, 6):
                    if c.get(str(v)) is not None:
                        cost.setdefault((v, n[v]), []).append(c[str(v)])
                        names[(v, n[v])] = t.scenario
    for t in data.of("throughput"):
        n = routes(t)
        if n is None or t.family is None or (t.result.get("ndr") or {}).get("is_lower_bound") or t.result.get("ndr_fps") is None:
            continue
        ndr.setdefault((t.family, n[t.family]), []).append(t.result["ndr_fps"])
        names[(t.family, n[t.family])] = t.scenario
    if not cost and not ndr:
        return None
    blocks = []
    for ident, title, y_label, points in (("fib-cost", "DUT CPU time per frame against table size", "cost per frame [ns]", cost),
                                          ("fib-ndr", "Throughput (NDR) against table size", "throughput [frames/s]", ndr)):
        if not points:
            continue
        series = []
        for v, pts in by(sorted(points), lambda k: k[0]).items():
            xs = tuple(float(k[1]) for k in pts)
            series.append(Series(f"IPv{v}", xs, tuple(median(points[k]) for k in pts)))
        blocks.append(Figure(ident, title, "routes of the family in the router", y_label, tuple(series), x_log=True,
                             note="Each family at its own table size (median over trials)."))
    rows = tuple((names[k], f"IPv{k[0]}", k[1], len(cost.get(k, [])), median(cost.get(k, [])), len(ndr.get(k, [])),
                  median(ndr.get(k, []))) for k in sorted(set(cost) | set(ndr)))
    blocks.append(Table("fib-scale", "Cost per frame and throughput per table size",
                        ("scenario", "family", "routes", "cost trials", "cost per frame median [ns]", "searches",
                         "NDR median [fps]"), rows,
                        "Cost per frame: the DUT's CPU time per frame of the family, read from its own runs inside "
                        "trials carrying both families (docs/methods.md); the verdicts on the families' difference at "
                        "each size are in the statistics section. Trials the tester limited are left out."))
    return Section("fib-scale", "Forwarding table size",
                   "What the routers' forwarding table costs each family: CPU time per frame and throughput against the "
                   "number of routes (RFC 3222 §3.4).", tuple(blocks))
