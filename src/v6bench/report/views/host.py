"""The tester hosts' own stacks (seed 001; seed 004 §2.1–2.2): TCP/UDP
throughput by message size (iperf3), and router latency by payload size
(UDP request/response through the router minus a back-to-back baseline)."""

from __future__ import annotations

from ..data import RunData
from ..model import Figure, Section, Series, Table
from ..group import by, mean


def host_stack(data: RunData) -> Section | None:
    blocks: list = []
    st = data.of("stack-throughput")
    if st:
        groups = by(st, lambda t: (t.scenario, t.result["protocol"], t.family))
        series, rows = [], []
        for (scen, proto, v), ts in groups.items():
            sizes = by(sorted(ts, key=lambda t: t.result["message_bytes"]), lambda t: t.result["message_bytes"])
            x = tuple(sizes)
            series.append(Series(" ".join(s for s in (scen, proto.upper(), f"IPv{v}") if s), x,
                                 tuple(mean([t.result["received_bps"] / 1e6 for t in sizes[m]]) for m in x)))
            for m, g in sizes.items():
                r = [t.result for t in g]
                lost = mean([x["loss_ratio"] * 100 for x in r if x.get("loss_ratio") is not None])
                rows.append((scen, proto.upper(), f"IPv{v}", m, len(g), mean([x["received_bps"] / 1e6 for x in r]),
                             min(x["received_bps"] / 1e6 for x in r), max(x["received_bps"] / 1e6 for x in r),
                             mean([x["retransmits"] for x in r if x.get("retransmits") is not None]), lost,
                             mean([x["client_cpu_pct"] for x in r if x.get("client_cpu_pct") is not None]),
                             mean([x["server_cpu_pct"] for x in r if x.get("server_cpu_pct") is not None])))
        blocks += [Figure("stack-throughput", "Host-stack throughput against message size", "message size [B]",
                          "received [Mb/s]", tuple(series), x_log=True, note="iperf3, mean over repetitions."),
                   Table("stack-throughput", "Host-stack throughput",
                         ("scenario", "protocol", "family", "message size [B]", "repetitions", "received mean [Mb/s]",
                          "min [Mb/s]", "max [Mb/s]", "TCP retransmits", "UDP loss [%]", "client CPU [%]", "server CPU [%]"),
                         tuple(rows))]
    rr = data.of("rr-latency")
    if rr:
        groups = by(rr, lambda t: (t.scenario, t.family))
        series, rows = [], []
        for (scen, v), ts in groups.items():
            sizes = by(sorted(ts, key=lambda t: t.result["payload_bytes"]), lambda t: t.result["payload_bytes"])
            x = tuple(sizes)
            name = " ".join(s for s in (scen, f"IPv{v}") if s)
            series.append(Series(f"router {name}", x, tuple(
                mean([t.result["router_latency_ns"] / 1e3 for t in sizes[p] if t.result.get("router_latency_ns") is not None])
                for p in x)))
            series.append(Series(f"back-to-back baseline {name}", x, tuple(
                mean([t.result["baseline"]["one_way_mean_ns"] / 1e3 for t in sizes[p]
                      if t.result["baseline"].get("one_way_mean_ns") is not None]) for p in x), "reference"))
            for p, g in sizes.items():
                r = [t.result for t in g]
                rows.append((scen, f"IPv{v}", p, len(g),
                             mean([x["routed"]["one_way_mean_ns"] / 1e3 for x in r if x.get("routed")
                                   and x["routed"].get("one_way_mean_ns") is not None]),
                             mean([x["baseline"]["one_way_mean_ns"] / 1e3 for x in r if x["baseline"].get("one_way_mean_ns") is not None]),
                             mean([x["router_latency_ns"] / 1e3 for x in r if x.get("router_latency_ns") is not None]),
                             mean([x["router_latency_p50_ns"] / 1e3 for x in r if x.get("router_latency_p50_ns") is not None])))
        blocks += [Figure("rr-latency", "Router latency against payload size", "UDP payload [B]", "one-way latency [µs]",
                          tuple(series), note="Routed one-way mean minus the back-to-back baseline's (seed 004 §2.1)."),
                   Table("rr-latency", "Router latency by request/response",
                         ("scenario", "family", "payload [B]", "repetitions", "routed one-way [µs]", "baseline one-way [µs]",
                          "router latency (means) [µs]", "router latency (medians) [µs]"), tuple(rows))]
    if not blocks:
        return None
    return Section("host", "Host-stack throughput and latency",
                   "The testers' kernels as endpoints (no test frames): what an application sees through the router.",
                   tuple(blocks))


def mesh(data: RunData) -> Section | None:
    tests = data.of("mesh")
    if not tests:
        return None
    series, rows = [], []
    for key, ts in by(tests, lambda t: (t.scenario, t.result["pattern"], t.mix, t.frame_size)).items():
        versions = sorted({int(v) for t in ts for row in t.result["loads"] for v in row["families"]})
        for v in versions:
            pts = by(sorted(((100 * row["load_per_port_fps"] / t.line_fps, row) for t in ts for row in t.result["loads"]
                             if t.line_fps and not row["tester_limited"] and str(v) in row["families"]), key=lambda p: p[0]),
                     lambda p: round(p[0], 3))
            x = tuple(pts)
            series.append(Series(f"{key[1]} mesh {ts[0].label(size=True)} IPv{v}", x,
                                 tuple(mean([100 * r["families"][str(v)]["loss_ratio"] for _, r in pts[load]]) for load in x)))
        for t in ts:
            for row in t.result["loads"]:
                rows.append((t.scenario, t.result["pattern"], t.mix, t.frame_size, row["load"], row["load_per_port_fps"],
                             100 * row["loss_ratio"], "; ".join(f"IPv{v} {100 * f['loss_ratio']:.3f}" for v, f in row["families"].items()),
                             len(row["flows"]), "yes" if row["tester_limited"] else ""))
    return Section("mesh", "Mesh loss", "Loss under full or partial mesh traffic (RFC 2889 §5.1; seed 004 §2.3–2.4).",
                   (Figure("mesh-loss", "Mesh loss against load per port", "load per sending port [% of line rate]",
                           "frame loss [%]", tuple(series), note="Tester-limited loads left out."),
                    Table("mesh", "Mesh loss per load",
                          ("scenario", "pattern", "mix", "frame size [B]", "load per port", "load per port [fps]", "loss [%]",
                           "loss per family [%]", "flows", "tester-limited"), tuple(rows))))
