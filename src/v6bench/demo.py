"""``v6bench demo`` (run by ``make demo``): IPv4 against IPv6 through one
Linux router (topology ``a``, seed 000 Topology A), for a few frame sizes.

For each frame size and family (mix 100/0, then 0/100) an RFC 2544 §26.1
binary search with short trials finds the highest zero-loss rate; the
latency is that of the best passing trial. Short trials make this a
demonstration, not a report: RFC 2544 results need 60-s trials.
"""

from __future__ import annotations

import json

from .errors import UsageError
from .lab import control
from .lab.site import Site
from .methods import binary_search
from .rates import line_rate_fps
from .report.text import align
from .trial.measurer import LabMeasurer
from .trial.request import MIN_FRAME, Mix

RESOLUTION = 0.05
MAX_TRIALS = 8
FAMILIES = ((4, Mix(100, 0)), (6, Mix(0, 100)))


def _sizes(text: str) -> list[int]:
    try:
        sizes = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise UsageError(f"--frame-sizes: {text!r} is not a comma-separated list of bytes") from None
    bad = [s for s in sizes if not MIN_FRAME[6] <= s <= 1518]
    if not sizes or bad:
        raise UsageError(f"--frame-sizes: use sizes in {MIN_FRAME[6]}..1518 bytes (IPv6 needs 84)")
    return sizes


def _row(version: int, size: int, link_bps: float, res: binary_search.SearchResult) -> dict:
    best = res.best.detail if res.best else None
    lat = best["streams"][0]["latency_ns"] if best else None
    routers = best["dut"]["routers"] if best else []
    return {
        "ip_version": version,
        "frame_size": size,
        "throughput_fps": res.throughput_fps,
        "throughput_is_lower_bound": res.is_lower_bound,
        "line_rate_fps": line_rate_fps(link_bps, size),
        "latency_ns": lat,
        "dut_cpu_busy_ratio": routers[0]["busy_ratio"] if routers else None,
        "trials": len(res.trials),
    }


def _render(lab_desc: str, rows: list[dict], duration_s: float) -> str:
    out = [f"v6bench demo: IPv4 against IPv6 through one Linux router ({lab_desc})",
           f"throughput: RFC 2544 §26.1 binary search, {duration_s:g}-s trials, {RESOLUTION:.0%} resolution "
           "(a demonstration: reports need 60-s trials)", ""]
    head = ("frame", "IP", "throughput fps", "% of line", "lat p50 µs", "p99 µs", "DUT CPU")
    table = [head]
    by = {(r["frame_size"], r["ip_version"]): r for r in rows}
    for size in sorted({r["frame_size"] for r in rows}):
        for v in (4, 6):
            r = by[(size, v)]
            thr = f"{'≥ ' if r['throughput_is_lower_bound'] else ''}{r['throughput_fps']:,.0f}"
            lat = r["latency_ns"] or {}
            cpu = r["dut_cpu_busy_ratio"]
            table.append((f"{size} B", f"IPv{v}", thr, f"{r['throughput_fps'] / r['line_rate_fps']:.1%}",
                          "-" if not lat else f"{lat['p50'] / 1000:.1f}", "-" if not lat else f"{lat['p99'] / 1000:.1f}",
                          "-" if cpu is None else f"{cpu:.0%}"))
        v4, v6 = by[(size, 4)], by[(size, 6)]
        if v4["throughput_is_lower_bound"] or v6["throughput_is_lower_bound"] or not v4["throughput_fps"]:
            ratio = "n/a"  # a lower bound compares with nothing
        else:
            ratio = f"{v6['throughput_fps'] / v4['throughput_fps']:.2f}"
        table.append(("", "v6/v4", ratio, "", "", "", ""))
    out += align(table)
    if any(r["throughput_is_lower_bound"] for r in rows):
        out += ["", "≥: the tester could not offer more on this machine (tester_limited); the DUT's limit lies above."]
    out += ["", "DUT CPU: the router's share of one CPU during the best passing trial.",
            "Tester and DUT share this machine; see docs/architecture.md for the CPU arrangement and its limits."]
    return "\n".join(out)


def main(site: Site, frame_sizes: str, duration_s: float, as_json: bool) -> int:
    sizes = _sizes(frame_sizes)
    if not 0.1 <= duration_s <= 60:
        raise UsageError("--trial-duration: use 0.1..60 s")
    rows = []
    with control.for_trial(site, "a", None, None, None) as lab:
        desc = control.describe(lab)
        for size in sizes:
            for version, mix in FAMILIES:
                measurer = LabMeasurer(site, lab, mix, size, drain_s=1.0)
                res = binary_search.search(measurer, duration_s, line_rate_fps(lab.link_speed_bps, size),
                                           RESOLUTION, max_trials=MAX_TRIALS)
                rows.append(_row(version, size, lab.link_speed_bps, res))
                if not as_json:
                    r = rows[-1]
                    print(f"  {size} B IPv{version}: {r['throughput_fps']:,.0f} frames/s after {r['trials']} trials", flush=True)
    if as_json:
        print(json.dumps({"lab": desc, "trial_duration_s": duration_s, "resolution": RESOLUTION, "rows": rows}, indent=1))
    else:
        print()
        print(_render(desc, rows, duration_s))
    return 0
