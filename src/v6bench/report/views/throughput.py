"""Throughput against frame size with the theoretical maximum (RFC 2544
§26.1; seed 000 Fig. 3, 6, 10), and throughput relative to 100 % IPv4 in
the table format of seed 002 ("Relative Max Throughput with respect to
IPv4": one row per frame size, one column per mix, NDR of the mix in % of
the 100/0 NDR at that size)."""

from __future__ import annotations

from ...core.rates import format_link_speed, line_rate_fps
from ..data import RunData
from ..model import Figure, Section, Series, Table
from ..group import by, cv_pct, mean, mix_key, series_key

def _sizes(lo: int, hi: int, n: int = 48) -> tuple[int, ...]:
    """Frame sizes to draw the line-rate curve through (it is not linear in the size)."""
    return tuple(sorted({round(lo + (hi - lo) * k / n) for k in range(n + 1)}))


def throughput(data: RunData) -> Section | None:
    tests = data.of("throughput")
    if not tests:
        return None
    groups = by(sorted(tests, key=series_key), series_key)
    fps_series, bps_series, rows = [], [], []
    for _, ts in groups.items():
        sizes = by(sorted(ts, key=lambda t: t.frame_size), lambda t: t.frame_size)
        # A search the tester capped gave only a lower bound: shown in the table, never averaged in.
        dut = {fs: [t for t in g if not t.result["ndr"]["is_lower_bound"]] for fs, g in sizes.items()}
        x = tuple(fs for fs in sizes if dut[fs])
        ndr = {fs: [t.result["ndr_fps"] for t in g] for fs, g in dut.items()}
        pdr = {fs: [t.result["pdr_fps"] for t in g if not t.result["pdr"]["is_lower_bound"]] for fs, g in sizes.items()}
        l1 = {fs: [t.result["ndr"]["l1_bps"] / 1e6 for t in g] for fs, g in dut.items()}
        label = ts[0].label()
        fps_series.append(Series(f"NDR {label}", x, tuple(mean(ndr[fs]) for fs in x)))
        bps_series.append(Series(f"NDR {label}", x, tuple(mean(l1[fs]) for fs in x)))
        for fs, g in sizes.items():
            r0 = g[0].result
            n = ndr[fs]
            rows.append((g[0].scenario, g[0].mix + g[0].traffic, g[0].direction, fs, len(n), len(g) - len(n), mean(n),
                         min(n, default=None), max(n, default=None), cv_pct(n), mean(pdr[fs]), cv_pct(pdr[fs]), mean(l1[fs]),
                         r0["line_rate"]["fps"], 100 * mean(n) / r0["line_rate"]["fps"] if n else None,
                         g[0].params["params"].get("search")))
    speeds = sorted({t.link_speed_bps for t in tests if t.link_speed_bps})
    for speed in speeds:
        x = _sizes(min(t.frame_size for t in tests), max(t.frame_size for t in tests))
        name = f"theoretical maximum: line rate at {format_link_speed(speed)}"
        fps_series.append(Series(name, x, tuple(line_rate_fps(speed, fs) for fs in x), "reference"))
        bps_series.append(Series(name, x, tuple(speed / 1e6 for _ in x), "reference"))
    note = ("Mean NDR over repetitions the tester did not cap; frames/s and Mb/s per direction (L1: with preamble and inter-frame gap). "
            "Line rate per direction: link speed / 8 / (frame + 20 B) frames/s (RFC 2544 §26.1), here at "
            f"{', '.join(format_link_speed(s) for s in speeds) or 'an unrecorded link speed'}; the table's line rate is "
            "the path's: over the most layer-1 bytes a test frame puts on any of its links, fragments and tunnel "
            "overhead included.")
    return Section("throughput", "Throughput against frame size",
                   "The highest load forwarded without loss (NDR, RFC 2544 §26.1), with the line rate as the theoretical maximum.",
                   (Figure("throughput-fps", "Throughput (NDR) against frame size", "frame size [B]", "throughput [frames/s]",
                           tuple(fps_series), note=note),
                    Figure("throughput-mbps", "Throughput (NDR) against frame size, bit rate", "frame size [B]",
                           "throughput [Mb/s, L1]", tuple(bps_series), note=note),
                    Table("throughput", "Throughput per test point",
                          ("scenario", "mix", "dir", "frame size [B]", "repetitions", "tester-limited (left out)",
                           "NDR mean [fps]", "NDR min [fps]", "NDR max [fps]", "NDR CV [%]", "PDR mean [fps]", "PDR CV [%]",
                           "NDR [Mb/s L1]", "line rate [fps]", "NDR [% of line]", "search"), tuple(rows),
                          "Over the repetitions whose search the tester did not cap (a capped one is only a lower bound: "
                          "counted, never averaged). CV: the coefficient of variation over repetitions, the figure's "
                          "spread.")))


def relative(data: RunData) -> Section | None:
    """Seed 002's table, for every scenario, traffic and direction that has 100/0."""
    tests = data.of("throughput")
    blocks = []
    for (scen, traffic, d), ts in by(tests, lambda t: (t.scenario, t.traffic, t.direction)).items():
        ndr = {(t.mix, t.frame_size): [] for t in ts}
        for t in ts:
            ndr[(t.mix, t.frame_size)].append(t.result["ndr_fps"])
        mixes = sorted({m for m, _ in ndr if m != "100/0"}, key=mix_key)
        sizes = sorted({fs for m, fs in ndr if m == "100/0"})
        if not mixes or not sizes:
            continue
        rows, series = [], {m: [] for m in mixes}
        for fs in sizes:
            base = mean(ndr[("100/0", fs)])
            row: list = [fs]
            for m in mixes:
                v = 100 * mean(ndr[(m, fs)]) / base if (m, fs) in ndr and base else None
                row.append(v)
                series[m].append(v)
            rows.append(tuple(row))
        where = " ".join(x for x in (scen, traffic.strip(), "bidirectional" if d == "bi" else "") if x)
        suffix = f" ({where})" if where else ""
        ident = "-".join(x for x in ("relative", scen, traffic.strip().replace(" ", "-"), d) if x)
        blocks.append(Table(ident, f"Relative max throughput with respect to IPv4{suffix}",
                            ("frame size [B]",) + tuple(f"rel. max throughput [%] {m.replace('/', '% IPv4 / ')}% IPv6" for m in mixes),
                            tuple(rows), "NDR of the mix in % of the 100 % IPv4 NDR at the same frame size (seed 002)."))
        blocks.append(Figure(ident + "-plot", f"Throughput relative to 100 % IPv4{suffix}", "frame size [B]",
                             "NDR relative to 100/0 [%]",
                             tuple(Series(m, tuple(sizes), tuple(series[m])) for m in mixes)))
    if not blocks:
        return None
    return Section("relative", "Throughput relative to 100 % IPv4",
                   "Each mix's NDR as a percentage of the 100 % IPv4 NDR at the same frame size, in seed 002's table format.",
                   tuple(blocks))
