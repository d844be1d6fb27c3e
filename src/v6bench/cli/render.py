"""What the commands print: the lab's status, a run's results. Rendering
only; the commands (``cli/*.py``) decide what to show."""

from __future__ import annotations

import json
import time

from ..lab import interface
from ..lab.protocol import Lab
from ..report import results as results_text
from ..store import export as store_export
from ..store.db import Store


def status_json(lab: Lab | None, busy: bool) -> dict:
    """``lab status --json`` (docs/trial-result.md)."""
    if lab is None:
        return {"up": False, "busy": busy, "topology": None, "nodes": []}
    record = interface.status_record(lab)
    record.pop("description")
    return {"up": True, "busy": busy, **{k: v for k, v in record.items() if k != "up"}}


def status_text(lab: Lab | None, busy: bool) -> str:
    if lab is None:
        return "no lab is up" + (" (a v6bench command is building or using one)" if busy else "")
    s = interface.status_record(lab)
    lines = [f"lab up: {s['description']}, MTU {lab.mtu}" + (" (temporary, in use)" if s["temporary"] else "")
             + (" (busy)" if busy and not s["temporary"] else "")]
    for n in lab.nodes:
        for i in n["interfaces"]:
            owner = " (engine)" if i.get("addresses_owner") == "engine" else ""
            lines.append(f"  {n['name']:<3} {n['role']:<6} {n['netns']:<10} {i['name']:<6} {i['mac']}  {i['ipv4']:<16} {i['ipv6']}{owner}")
        if n.get("vm"):
            v = n["vm"]
            lines.append(f"  {n['name']:<3} VM: QEMU ({v['accel']}) pid {v['pid']} on CPU {v.get('cpu')}, booted in "
                         f"{v['boot_s']:.1f} s; console {v['run_dir']}/{n['name']}-console.log")
    for router, r in ((lab.fib or {}).get("routers") or {}).items():
        lines.append(f"  {router:<3} table: {r['ipv4_routes']:,} IPv4 + {r['ipv6_routes']:,} IPv6 routes via {r['next_hop']['dev']}, "
                     f"loaded in {r['load_s']:.1f} s, FIB learning {r['fib_learning_s']:.1f} s, "
                     f"slab +{r['slab_kib'] / 1024:,.0f} MiB")
    return "\n".join(lines)


def status(lab: Lab | None, busy: bool, as_json: bool) -> str:
    return json.dumps(status_json(lab, busy), indent=1) if as_json else status_text(lab, busy)


def run(store: Store, run_id: int, as_json: bool) -> str:
    """A stored run: environment and every test (JSON without the trials)."""
    if as_json:
        data = store_export.as_json(store, run_id)
        for t in data["tests"]:
            t.pop("trials")
        return json.dumps(data, indent=1, default=str)
    return results_text.run_text(store.run(run_id), store.tests(run_id))


def runs_json(rows: list) -> list[dict]:
    """``results list --json``: each run's row with its machine (label and record) and the time it ran
    (``wall_s``, its sessions summed) in place of its whole environment."""
    from ..core import machine

    return [{**{k: v for k, v in r.items() if k != "environment"}, "machine": machine.label(r["environment"]),
             "host": machine.record(r["environment"]), "wall_s": results_text.wall_s(r)}
            for r in rows]


def runs(rows: list) -> str:
    """Every run of a database, one line each."""
    return results_text.runs_table(rows)


def lab_check(found: dict, as_json: bool) -> str:
    """What ``lab check`` found (:func:`v6bench.trial.probe.check`)."""
    if as_json:
        return json.dumps(found, indent=1, default=str)
    lines = [f"{found['lab']}: the ports pass the safety checks"]
    for name, p in found["ports"].items():
        gw = found["gateways"].get(name, {})
        speed = f"{p['speed_mbps']} Mb/s" if p["speed_mbps"] else "speed unknown"
        lines.append(f"  {name}: {p['interface']}" + (f" in {p['netns']}" if p["netns"] else "")
                     + f", MAC {p['mac']}, {p['operstate'].lower()}, {speed}; "
                     f"gateway MACs IPv4 {gw.get('ipv4') or 'not learned'}, IPv6 {gw.get('ipv6') or 'not learned'}")
    lines.append("  probe (frames sent → received): " + ", ".join(
        f"{s['stream']} {s['tx_frames']} → {s['rx_frames']}" for s in found["probe"]))
    snmp = found["snmp"]
    if snmp is None:
        lines.append("  SNMP: none declared: the DUT's CPU and counters will not be read")
    else:
        lines.append(f"  SNMP: {snmp['sys_name']}: {(snmp['sys_descr'] or '').splitlines()[0][:100] if snmp['sys_descr'] else '-'}")
        lines.append(f"  CPU: {snmp['cpu_source_description']}")
        for port, c in found["dut"]["interfaces"].items():
            lines.append(f"  {port} (ifIndex {snmp['if_index'].get(port.split('/', 1)[1])}): over the probe "
                         f"in {c['rx_packets']} out {c['tx_packets']} packets, discards {c['rx_dropped']}/{c['tx_dropped']}, "
                         f"errors {c['rx_errors']}/{c['tx_errors']}")
    lines.append(f"  table: {found['table']}")
    return "\n".join(lines)


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{v:+.2f}"


def effect_json(e) -> dict:
    """One run's effect in a comparison across runs."""
    return {"run": e.run_id, "machine": e.machine, "attributes": e.attributes, "effect_pct": e.effect_pct,
            "ci_low_pct": e.low_pct, "ci_high_pct": e.high_pct, "outcome": e.outcome, "verdict": e.verdict,
            "n_a": e.n_a, "n_b": e.n_b,
            "log_ratio": None if e.log_effect is None else dict(zip(("y", "se", "df"), e.log_effect))}


def compare_json(a, pooled: list, ba) -> dict:
    """``v6bench compare --json``: the runs, every pooled comparison, and the before/after of two runs."""
    from ..core import machine
    from ..report.across import describe_key

    out = {"runs": [{"run": i, "name": r["name"], "uid": r.get("uid"), "machine": machine.record(r["environment"]),
                     "machine_label": machine.label(r["environment"]), "origin": r.get("origin")} for i, r in a.runs.items()],
           "comparisons": [{"comparison": describe_key(p.key), "metric": p.key[0], "point": p.key[1], "b": p.key[2],
                            "design": p.key[3], "runs": [effect_json(e) for e in p.runs], "pooled_pct": p.pooled_pct,
                            "ci_low_pct": p.low_pct, "ci_high_pct": p.high_pct, "tau_pct": p.tau_pct,
                            "i2_pct": p.fit.i2_pct if p.fit else None, "q": p.fit.q if p.fit else None,
                            "q_df": p.fit.q_df if p.fit else None, "q_p_adjusted": p.q_p_adjusted,
                            "p_adjusted": p.p_adjusted, "verdict": p.verdict,
                            "machines_nested": None if p.nested_fit is None else {
                                "machines": p.nested_fit.m, "df": p.nested_fit.df,
                                "sigma2_machine": p.nested_fit.sigma2_machine, "sigma2_run": p.nested_fit.sigma2_run},
                            "by_machine": [m.__dict__ for m in p.by_machine],
                            "moderator": None if p.moderation is None else {
                                "attribute": p.moderation.attribute, "levels": p.moderation.levels,
                                "level_pct": p.moderation.level_pct, "f": p.moderation.f, "p": p.moderation.p,
                                "p_adjusted": p.moderation.p_adjusted,
                                "tau_pct": p.moderation.tau_pct, "r2_pct": p.moderation.r2_pct,
                                "verdict": p.moderation.verdict}} for p in pooled]}
    if ba is not None:
        out["before_after"] = {"before": ba.before, "after": ba.after, "same_machine": ba.same_machine,
                               "same_campaign": ba.same_campaign, "repeats": ba.repeats, "short": ba.short,
                               "changes": [c.__dict__ for c in ba.changes]}
    return out


def compare_text(a, pooled: list, ba) -> str:
    """``v6bench compare``: the runs and their machines, then each comparison: runs, pooled, verdict."""
    from ..core import machine
    from ..report.across import describe_key

    lines = ["runs:"]
    for i, r in a.runs.items():
        env = r["environment"]
        lines.append(f"  {i}: {r['name']}, {time.strftime('%Y-%m-%d %H:%M', time.localtime(r['started_at_unix_s']))}, "
                     f"{machine.label(env)}, kernel {env.get('kernel')}" + (f" ({r['origin']})" if r.get("origin") else ""))
    if not pooled:
        lines.append("no comparison is present in more than one of these runs")
    for p in pooled:
        lines += ["", describe_key(p.key), f"  {p.verdict}"]
        for e in p.runs:
            ci = f"({_pct(e.low_pct)} … {_pct(e.high_pct)})" if e.low_pct is not None else "(no interval)"
            lines.append(f"    run {e.run_id}: {_pct(e.effect_pct)} % {ci}  {e.outcome}; {e.machine}")
        if p.moderation is not None:
            lines.append(f"  by {p.moderation.attribute}: {p.moderation.verdict}")
    if ba is not None:
        lines += ["", f"before/after: run {ba.before} → run {ba.after}"
                  + ("" if ba.same_machine else " (on different machines: a change includes the machine's)")]
        if ba.short:
            lines.append(f"  {ba.short}")
        for c in ba.changes:
            sides = "" if (c.runs_before, c.runs_after) == (1, 1) else f" (runs {c.runs_before} → {c.runs_after})"
            lines.append(f"  {c.metric} {c.point} {c.series}: {c.before:.6g} → {c.after:.6g}{sides} "
                         f"({c.change_pct:+.2f} %): {c.verdict}")
    return "\n".join(lines)


def trend_text(trends: list) -> str:
    """``v6bench trend``: each comparison's runs in time order, machine changes and a change point marked."""
    if not trends:
        return "no comparison is present in more than one run"
    lines = []
    for t in trends:
        lines += [t.name, f"  {t.verdict}"]
        for j, e in enumerate(t.runs):
            mark = ("◆ machine changed " if j in t.machine_changes else "") + ("▲ change point " if j == t.change_at else "")
            ci = f"({_pct(e.low_pct)} … {_pct(e.high_pct)})" if e.low_pct is not None else "(no interval)"
            lines.append(f"    {mark}run {e.run_id} {time.strftime('%Y-%m-%d %H:%M', time.localtime(e.started_at_unix_s))}: "
                         f"{_pct(e.effect_pct)} % {ci}  {e.outcome}; {e.machine}")
        lines.append("")
    return "\n".join(lines).rstrip()


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f} min" if seconds >= 90 else f"{seconds:.0f} s"


def plan(c, p, where: str) -> str:
    """``run FILE --plan``: the campaign's tests, their points and trials,
    lab builds, self-test and the estimated wall time (campaign/estimate.py)."""
    d = c.design
    seq = f", sequential up to {d.max_blocks} blocks" if d.sequential else ""
    lines = [f"plan: {c.name} ({c.path}), {len(c.scenarios)} scenario(s), {d.order} order{seq}",
             f"{'test':<5} {'kind':<17} {'points':>11} {'trials a point':>15} {'s a trial':>9}  estimate"]
    for t in p.tests:
        points = f"{t.points}" + (f" (≤ {t.points_most})" if t.points_most > t.points else "")
        trials = f"{t.trials:.1f}" + (f" (≤ {t.trials_most:.0f})" if t.trials_most > t.trials + 0.5 else "")
        lines.append(f"{t.test.index:<5} {t.test.kind:<17} {points:>11} {trials:>15} {t.seconds_a_trial:>9.1f}  "
                     f"{_minutes(t.seconds)}" + (" (trials from history)" if t.from_history else
                                                 " (trials from this kind's runs with other parameters)" if t.alike else
                                                 " (trials guessed: no run of this kind here yet)" if t.guessed else ""))
    builds = "; ".join(f"{b.count} × {b.key} {b.seconds_each:.0f} s" + ("" if b.from_history else " (guessed)")
                       for b in p.builds)
    lines.append(f"lab builds: {sum(b.count for b in p.builds)}, {_minutes(p.builds_s)} ({builds}); "
                 f"self-test: {_minutes(p.selftest_s) if p.selftest_s else 'none due'}")
    source = f"{p.runs_read} earlier run(s) on this machine in {where}" if p.runs_read else f"no earlier run on this machine in {where}: fallbacks"
    lines.append(f"estimated wall time: {_minutes(p.seconds)} (at most {_minutes(p.seconds_most)}), from {source}")
    return "\n".join(lines)
