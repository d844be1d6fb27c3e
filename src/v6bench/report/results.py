"""Text views of stored results: ``results list``, ``results show`` and
the table ``v6bench test`` prints."""

from __future__ import annotations

import time

from ..core import machine
from ..core.frames import Traffic
from .text import align


def headline(kind: str, result: dict) -> str:
    """One line that sums up a test's result."""
    if kind == "throughput":
        def lb(goal: str) -> str:  # the tester, not the DUT, capped this goal's search
            return "≥ " if result[goal].get("is_lower_bound") else ""
        return f"NDR {lb('ndr')}{result['ndr_fps']:,.0f} fps, PDR {lb('pdr')}{result['pdr_fps']:,.0f} fps"
    if result.get("applicable") is False:
        return "not applicable: " + result.get("reason", "")
    if kind == "loss":
        return f"{len(result['loads'])} loads, ended by {result['ended_by']}"
    if kind == "latency":
        fam = result["loads"][0]["families"]
        return ", ".join(f"IPv{v} typical {f['typical_ns'] / 1e3:.1f} µs" for v, f in fam.items() if f["typical_ns"]) or "no latency"
    if kind == "back-to-back":
        return f"{result.get('average_frames', 0):,.0f} frames average" if "average_frames" in result else result.get("reason", "")
    if kind == "recovery":
        return ", ".join(f"IPv{v} {s['mean_s']:.3f} s" for v, s in result["recovery"].items() if s["mean_s"] is not None) or "-"
    if kind == "stack-throughput":
        extra = (f", {result['loss_ratio']:.2%} of datagrams lost" if result["protocol"] == "udp"
                 else f", {result.get('retransmits') or 0:,} retransmits")
        return (f"{result['protocol'].upper()} {result['message_bytes']:,} B messages: {result['received_bps'] / 1e6:,.1f} Mb/s "
                f"received{extra}; CPU client {_pct(result['client_cpu_pct'])}, server {_pct(result['server_cpu_pct'])}")
    if kind == "rr-latency":
        base = result["baseline"]["one_way_mean_ns"]
        if "routed" not in result:
            return f"{result['payload_bytes']:,} B payload: one-way {_us(base)} µs back to back (p2p: no router)"
        return (f"{result['payload_bytes']:,} B payload: one-way {_us(result['routed']['one_way_mean_ns'])} µs routed, "
                f"{_us(base)} µs back to back: router {_us(result['router_latency_ns'])} µs")
    if kind == "mesh":
        return f"{result['pattern']} mesh: " + ", ".join(
            f"{r['load']} {r['loss_ratio']:.2%} lost" + (" (tester-limited)" if r["tester_limited"] else "") for r in result["loads"])
    if kind == "reset":
        return "; ".join(f"{k}: {_reset_kind(r)}" for k, r in result["kinds"].items())
    if kind == "connections":
        return ", ".join(_connection_metric(m, result[m]) for m in result["metrics"] if m in result)
    return "done"


def _connection_metric(name: str, r: dict) -> str:
    """One RFC 9693 metric of a ``connections`` test in words."""
    if name == "tear_down_rate":
        return f"tear-down {r['rate_per_s']:,.0f}/s" if r["rate_per_s"] is not None else f"tear-down: {r['why_none']}"
    if r.get("value") is None:
        return f"{'capacity' if name == 'capacity' else 'establishment'}: not measured ({r.get('refused')})"
    bound = "≥ " if r["is_lower_bound"] else ""
    why = " (tester-limited)" if r["tester_limited"] else " (the search's top)" if r["reached_max"] else ""
    if name == "capacity":
        return f"capacity {bound}{r['value']:,.0f} connections{why}"
    return f"establishment {bound}{r['value']:,.0f}/s{why}"


def _reset_kind(r: dict) -> str:
    """One reset kind's mean times per family, or why it has none: repetitions
    the tester's, or families still losing frames when the traffic ended
    (methods/reset.py: no gap to measure, at least the time given)."""
    times = ", ".join(f"IPv{v} {s['mean_s']:.3f} s" for v, s in r["reset_time"].items() if s["mean_s"] is not None)
    if times:
        return times
    reps = r["repetitions"]
    limited = sum(1 for rep in reps if rep["tester_limited"])
    why = [f"{limited} of {len(reps)} repetitions tester-limited"] if limited else []
    lost_to_end = [f["reset_time_at_least_s"] for rep in reps if not rep["tester_limited"]
                   for f in rep["families"].values() if f.get("recovered") is False]
    if lost_to_end:
        why.append(f"frames lost up to the end of the traffic in {len(lost_to_end)} family trial(s), "
                   f"so no gap to measure (≥ {min(lost_to_end):.2f} s)")
    return f"no value ({'; '.join(why) or 'no repetition'})"


def _us(ns: float | None) -> str:
    return "-" if ns is None else f"{ns / 1e3:,.1f}"


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.0f} %"


def _when(t: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(t)) if t else "-"


def runs_table(runs: list[dict]) -> str:
    if not runs:
        return "no runs yet"
    rows = [["run", "name", "status", "started", "finished", "machine", "origin", "tests", "trials", "wall [min]"]]
    rows += [[str(r["id"]), r["name"], r["status"], _when(r["started_at_unix_s"]), _when(r["finished_at_unix_s"]),
              machine.label(r.get("environment") or {}), "imported" if r.get("origin") else "here",
              str(r["tests_done"]), str(r["trials"]), wall_min(r)] for r in runs]
    return "\n".join(align(rows, left_columns=7))


def wall_s(r: dict) -> float | None:
    """The time a run ran [s], its sessions summed (``time_s.wall`` of its record, core/phases.py): a
    run resumed the next day took this long, not finished minus started; None where none was recorded."""
    wall = ((r.get("environment") or {}).get("time_s") or {}).get("wall")
    return float(wall) if isinstance(wall, (int, float)) else None


def wall_min(r: dict) -> str:
    """:func:`wall_s` in minutes for the runs table, "-" where none was recorded."""
    wall = wall_s(r)
    return f"{wall / 60:.1f}" if wall is not None else "-"


def _mbps(x: float | None) -> str:
    return f"{x / 1e6:,.1f}" if x is not None else "-"


def _mix(t: dict) -> str:
    """The mix, with the extension header preset or echo target if the test
    had one, after the test's scenario if the campaign had scenarios."""
    p = t.get("params") or {}
    where = f"[{p['scenario']}] " if p.get("scenario") else ""
    return where + t["mix"] + Traffic.from_json(p).describe()


def throughput_table(tests: list[dict]) -> list[str]:
    rows = [["mix", "size B", "dir", "NDR fps", "NDR Mb/s L1", "PDR fps", "PDR Mb/s L1", "line fps", "NDR/line"]]
    for t in tests:
        r = t["result"]
        if t["kind"] != "throughput" or not r:
            continue
        lb = "≥" if r["ndr"]["is_lower_bound"] else ""
        rows.append([_mix(t), str(t["frame_size"]), "bi" if t["bidirectional"] else "uni", f"{lb}{r['ndr_fps']:,.0f}",
                     _mbps(r["ndr"]["l1_bps"]), f"{r['pdr_fps']:,.0f}", _mbps(r["pdr"]["l1_bps"]),
                     f"{r['line_rate']['fps']:,.0f}", f"{r['ndr']['ratio_of_line']:.1%}"])
    return align(rows, left_columns=3) if len(rows) > 1 else []


def tests_table(tests: list[dict]) -> str:
    lines = throughput_table(tests)
    others = [t for t in tests if t["kind"] != "throughput" or not t["result"]]  # a search that failed: its reason
    if others:
        if lines:
            lines.append("")
        rows = [["test", "mix", "size B", "dir", "status", "result"]]
        for t in others:
            head = headline(t["kind"], t["result"]) if t["result"] else (t.get("error") or "")
            rows.append([t["kind"], _mix(t), str(t["frame_size"]) if t["frame_size"] else "-",
                         "bi" if t["bidirectional"] else "uni", t["status"], head])
        lines += align(rows, left_columns=6)
    return "\n".join(lines)


def run_text(run: dict, tests: list[dict]) -> str:
    env = run["environment"]
    labs = "; ".join(f"{k}: {e.get('dut', {}).get('description', '?')}" for k, e in env["scenarios"].items()) \
        if env.get("scenarios") else env.get("dut", {}).get("description", "?")
    head = [f"run {run['id']}: {run['name']} ({run['status']}), {_when(run['started_at_unix_s'])} – {_when(run['finished_at_unix_s'])}",
            f"  command: {run['command']}",
            f"  lab: {labs}; kernel {env.get('kernel')}; machine {machine.label(env)}; tester and DUT share this machine",
            f"  engine {env.get('engine', {}).get('engine_version')}; self-test {run.get('selftest_id') or 'none'}"]
    if run.get("error"):
        head.append(f"  error: {run['error']}")
    return "\n".join(head) + "\n\n" + tests_table(tests)
