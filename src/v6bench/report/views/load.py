"""Views over offered load, from the frame loss rate test's sweep (RFC 2544
§26.3) and the throughput searches' trials:

- frame loss against offered load (seed 000 Fig. 8; seed 002);
- the DUT's CPU against load (seed 000 Fig. 4), against frame size per
  load (Fig. 7) and at the throughput (Fig. 5, 9);
- the mean inter-packet delay at the receiver against load (Fig. 11:
  seed 000 measured the time between consecutive received frames).

Trials the tester limited are left out (and counted in the notes).
"""

from __future__ import annotations

from ..data import RunData, TestData
from ..model import Figure, Section, Series, Table
from ..group import by, cv_pct, dut_cpu_pct, load_pct, mean, measured, series_key


def _points(t: TestData) -> list[tuple[float, dict]]:
    """(load % of line, trial) for a loss test's trials the tester did not limit."""
    out = []
    for x in measured(t):
        pct = load_pct(t, x)
        if pct is not None:
            out.append((round(pct, 3), x))
    return out


def _limited(tests: list[TestData]) -> int:
    return sum(1 for t in tests for x in t.trials if x["tester_limited"])


def _routers(tests: list[TestData]) -> list[str]:
    return sorted({r for t in tests for x in t.trials for r in dut_cpu_pct(x)})


def _ipd_us(trial: dict, version: int) -> float | None:
    """Frame-weighted mean time between consecutive received frames of one family [µs]."""
    eng = ((trial.get("result") or {}).get("engine") or {}).get("streams") or []
    ia = [s["inter_arrival_ns"] for s in eng if s["ip_version"] == version and s.get("inter_arrival_ns")]
    n = sum(x["count"] for x in ia)
    return sum(x["mean"] * x["count"] for x in ia) / n / 1e3 if n else None


def load_views(data: RunData) -> Section | None:
    tests = sorted(data.of("loss"), key=lambda t: (series_key(t), t.frame_size))
    if not tests:
        return None
    routers = _routers(tests)
    groups = by(tests, lambda t: (series_key(t), t.frame_size))
    loss_s, cpu_s, ipd_s, rows = [], [], [], []
    for _, ts in groups.items():
        label = ts[0].label(size=True)
        pts = by(sorted((p for t in ts for p in _points(t)), key=lambda p: p[0]), lambda p: p[0])
        x = tuple(pts)
        loss_s.append(Series(label, x, tuple(mean([100 * tr["loss_ratio"] for _, tr in pts[pct]]) for pct in x)))
        for r in routers:
            cpu_s.append(Series(f"{label} {r}" if len(routers) > 1 else label, x,
                                tuple(mean([dut_cpu_pct(tr)[r] for _, tr in pts[pct] if r in dut_cpu_pct(tr)]) for pct in x)))
        versions = sorted({s["ip_version"] for t in ts for tr in t.trials for s in tr["streams"]})
        for v in versions:
            ipd_s.append(Series(f"{label} IPv{v}", x, tuple(mean([y for _, tr in pts[pct] if (y := _ipd_us(tr, v)) is not None])
                                                             for pct in x)))
        for pct in x:
            trs = [tr for _, tr in pts[pct]]
            cpu = [dut_cpu_pct(tr) for tr in trs]
            rows.append((ts[0].scenario, ts[0].mix + ts[0].traffic, ts[0].direction, ts[0].frame_size, pct, len(trs),
                         mean([tr["offered_fps"] for tr in trs]), mean([100 * tr["loss_ratio"] for tr in trs]),
                         "; ".join(f"{r} {mean([c[r] for c in cpu if r in c]):.1f}" for r in routers if any(r in c for c in cpu)),
                         "; ".join(f"IPv{v} {y:.2f}" for v in versions
                                   if (y := mean([z for tr in trs if (z := _ipd_us(tr, v)) is not None])) is not None)))
    lim = _limited(tests)
    note = f"{lim} tester-limited trials left out." if lim else ""
    blocks: list = [
        Figure("loss-vs-load", "Frame loss against offered load", "offered load [% of line rate]", "frame loss [%]",
               tuple(loss_s), note=note)]
    if routers:
        blocks.append(Figure("cpu-vs-load", "DUT CPU against offered load", "offered load [% of line rate]",
                             "DUT forwarding CPU [% of one CPU]", tuple(cpu_s), note=note))
        by_load = _cpu_by_size(tests, routers)
        if by_load:
            blocks.append(by_load)
    blocks.append(Figure("ipd-vs-load", "Mean inter-packet delay at the receiver against offered load",
                         "offered load [% of line rate]", "mean inter-packet delay [µs]", tuple(ipd_s), note=note))
    blocks.append(Table("loss-sweep", "Frame loss, DUT CPU and inter-packet delay per load",
                        ("scenario", "mix", "dir", "frame size [B]", "load [% of line]", "trials", "offered [fps]",
                         "loss [%]", "DUT CPU [% of one CPU]", "mean inter-packet delay [µs]"), tuple(rows), note))
    return Section("load", "Loss, DUT CPU and inter-packet delay against load",
                   "The frame loss rate sweep (RFC 2544 §26.3) from 100 % of line rate down; the DUT's forwarding CPU "
                   "(its NAPI threads' run time over the trial) and the receiver's mean time between frames in every trial.",
                   tuple(blocks))


def _cpu_by_size(tests: list[TestData], routers: list[str]) -> Figure | None:
    """Seed 000 Fig. 7: CPU against frame size, one line per mix and load."""
    series = []
    for key, ts in by(tests, lambda t: (series_key(t))).items():
        pts = by(sorted(((pct, t.frame_size, tr) for t in ts for pct, tr in _points(t)), key=lambda p: (p[0], p[1])),
                 lambda p: p[0])
        for pct, ps in pts.items():
            sizes = by(ps, lambda p: p[1])
            if len(sizes) < 2:
                continue
            x = tuple(sizes)
            series.append(Series(f"{ts[0].label()} at {pct:g} %", x, tuple(
                mean([c for _, _, tr in sizes[fs] for r in routers if (c := dut_cpu_pct(tr).get(r)) is not None]) for fs in x)))
    if not series:
        return None
    return Figure("cpu-vs-size", "DUT CPU against frame size per load", "frame size [B]", "DUT forwarding CPU [% of one CPU]",
                  tuple(series), note="Mean over the routers and repetitions.")


def cpu_at_throughput(data: RunData) -> Section | None:
    """Seed 000 Fig. 5 and 9: CPU at the highest loss-free load, per frame size."""
    tests = data.of("throughput")
    series, rows = [], []
    for _, ts in by(sorted(tests, key=series_key), series_key).items():
        sizes = by(sorted(ts, key=lambda t: t.frame_size), lambda t: t.frame_size)
        y = []
        for fs, g in sizes.items():
            cpus = []
            for t in g:
                at = [x for x in measured(t, t.result["ndr_fps"]) if x["lost_frames"] == 0]
                cpus += [sum(dut_cpu_pct(x).values()) for x in at if dut_cpu_pct(x)]
            y.append(mean(cpus))
            if cpus:
                rows.append((ts[0].label(), fs, len(cpus), mean(cpus), min(cpus), max(cpus), cv_pct(cpus)))
        if any(v is not None for v in y):
            series.append(Series(ts[0].label(), tuple(sizes), tuple(y)))
    if not series:
        return None
    return Section("cpu", "DUT CPU at the throughput",
                   "The DUT's forwarding CPU in the loss-free trial at the NDR load of each throughput search, over "
                   "the traffic window only (docs/methods.md).",
                   (Figure("cpu-at-throughput", "DUT CPU at the throughput against frame size", "frame size [B]",
                           "DUT forwarding CPU [% of one CPU, all routers]", tuple(series)),
                    Table("cpu-at-throughput", "DUT CPU at the throughput: spread over repetitions",
                          ("series", "frame size [B]", "trials", "mean [% CPU]", "min [% CPU]", "max [% CPU]", "CV [%]"),
                          tuple(rows), "One value per loss-free trial at the NDR load (one per search)."),))


def cpu_by_rate(data: RunData) -> Section | None:
    """Seed 000 Fig. 12, 15, 17: the DUT's CPU against the offered rate in
    frames/s, from the latency tests' fixed-rate trials (ICMP echo,
    extension headers, fragmentation: one line per test point)."""
    series = []
    for _, ts in by(sorted(data.of("latency"), key=lambda t: (series_key(t), t.frame_size)),
                    lambda t: (series_key(t), t.frame_size)).items():
        pts = by(sorted(((x["intended_fps"], x) for t in ts for x in measured(t) if dut_cpu_pct(x)), key=lambda p: p[0]),
                 lambda p: round(p[0], 3))
        if pts:
            x = tuple(pts)
            series.append(Series(ts[0].label(size=True), x, tuple(mean([sum(dut_cpu_pct(tr).values()) for _, tr in pts[r]])
                                                                  for r in x)))
    if not series:
        return None
    return Section("cpu-rate", "DUT CPU against offered rate",
                   "The DUT's forwarding CPU in the latency tests' trials, against their offered rate (frames/s per direction).",
                   (Figure("cpu-vs-rate", "DUT CPU against offered rate", "offered rate [frames/s]",
                           "DUT forwarding CPU [% of one CPU, all routers]", tuple(series), x_log=True),))
