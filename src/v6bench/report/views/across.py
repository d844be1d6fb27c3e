"""A report over several runs (``v6bench compare``, ``v6bench trend``):
the runs and their machines, each comparison's per-run forest with the
pooled estimate, the heterogeneity and a moderator, before/after tables
and trends (:mod:`..across`, :mod:`..change`, :mod:`..trend`)."""

from __future__ import annotations

import time

from ...core import machine
from ..across import Pooled, describe_key
from ..attributes import attributes
from ..change import BeforeAfter
from ..model import MACHINE_POOLED, POOLED, Forest, Interval, Section, Table
from ..trend import Trend
from ..stats import CORRECTION


def _when(t: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(t)) if t else "-"


def runs_table(runs: dict[int, dict]) -> Table:
    """Which runs, made where: every comparison across runs shows this first."""
    rows = []
    for run_id, r in runs.items():
        env = r["environment"]
        a = attributes(r)
        rec = machine.record(env)
        rows.append((run_id, r["name"], _when(r["started_at_unix_s"]), machine.label(env), rec.get("microcode"),
                     env.get("kernel"), a["dut"], a["config"], r.get("origin") or "made here"))
    return Table("runs", "Runs compared and the machines that made them",
                 ("run", "campaign", "started", "machine", "microcode", "kernel", "DUT", "configuration hash", "origin"),
                 tuple(rows), "A figure holds for the machine that made it: a lookup's cost depends on the CPU and its "
                 "caches. Runs stored before v6bench recorded the whole machine show the CPU's model name and count only.")


def _run_label(e, runs: dict[int, dict]) -> str:
    """A forest's row: the run, when, and its machine in short (the runs table has the whole record)."""
    return f"run {e.run_id} ({_when(e.started_at_unix_s)}): {e.attributes['machine']}"


def forest(p: Pooled, runs: dict[int, dict], fid: str) -> Forest:
    """The runs grouped by machine, each machine's runs pooled alone after them (where it ran two or more),
    and the pooled effect over all as the diamond at the foot."""
    shown = [e for e in p.runs if e.effect_pct is not None]
    mine = {m.machine: m for m in p.by_machine}
    rows = []
    for name in dict.fromkeys(e.attributes["machine"] for e in shown):
        rows += [Interval(_run_label(e, runs), e.effect_pct, e.low_pct, e.high_pct, None, p.key[3], e.outcome)
                 for e in shown if e.attributes["machine"] == name]
        if name in mine:
            m = mine[name]
            # Descriptive (grey): a machine's interval is not a corrected test, so never coloured "differs".
            rows.append(Interval(f"{m.runs} runs pooled: {name}", m.pooled_pct, m.low_pct, m.high_pct, None,
                                 MACHINE_POOLED, "other"))
    if p.fit is not None:
        outcome = "differs" if p.p_adjusted is not None and p.p_adjusted < 0.05 else "none"
        how = (f"{p.nested_fit.m} machines, runs nested" if p.nested_fit is not None else "random effects")
        rows.append(Interval(f"pooled over {p.fit.k} runs ({how}, Hartung–Knapp)", p.pooled_pct, p.low_pct,
                             p.high_pct, None, POOLED, outcome))
    return Forest(fid, describe_key(p.key), "B − A [% of A]", tuple(rows), p.verdict)


def pooled_section(pooled: list[Pooled], runs: dict[int, dict]) -> Section:
    summary = tuple((describe_key(p.key), len(p.runs), len(p.machines), p.pooled_pct, p.low_pct, p.high_pct, p.tau_pct,
                     p.fit.i2_pct if p.fit else None, p.fit.q if p.fit else None,
                     p.q_p_adjusted, p.p_adjusted, p.verdict) for p in pooled)
    blocks: list = [runs_table(runs),
                    Table("pooled", "Every comparison present in more than one run",
                          ("comparison", "runs", "machines", "pooled B − A %", "95 % CI low %", "95 % CI high %", "τ %",
                           "I² %", "Cochran's Q", f"Q p ({CORRECTION[1]})", f"pooled p ({CORRECTION[1]})", "verdict"),
                          summary, "Each run's effect is its own report's (B − A in % of A, 95 % interval); pooled on "
                          "the log-ratio scale, each with its own standard error, by a random-effects model: REML τ², "
                          "Hartung–Knapp interval (t with k − 1 df, or m − 1 for runs nested in m machines: wide with "
                          "few). τ: the spread of the true effects between runs, in %; I²: the share of the "
                          "variation that is between runs. docs/compare.md.")]
    mods = [(describe_key(p.key), p.moderation.attribute, ", ".join(f"{lv}: {v:+.2f} %" for lv, v in
                                                                     zip(p.moderation.levels, p.moderation.level_pct)),
             p.moderation.f, p.moderation.p, p.moderation.p_adjusted, p.moderation.tau_pct, p.moderation.r2_pct,
             p.moderation.verdict)
            for p in pooled if p.moderation is not None]
    if mods:
        blocks.append(Table("moderator", "Does a run attribute explain the differences?",
                            ("comparison", "attribute", "pooled effect by level", "F", "p", f"p ({CORRECTION[1]})",
                             "τ left %", "R² %", "verdict"),
                            tuple(mods), "A mixed-effects meta-regression with the attribute's levels (the first the "
                            "reference): the F test of the levels (Hartung–Knapp), corrected over every comparison's, "
                            "and the share of τ² they explain."))
    blocks += [forest(p, runs, f"forest-{i}") for i, p in enumerate(pooled) if p.runs]
    return Section("across-runs", "Across runs: each run, pooled, and how far the runs agree",
                   "For every comparison present in more than one run: each run's effect with its interval, labelled "
                   "with its machine, the pooled estimate, the heterogeneity, and a verdict in words.", tuple(blocks))


def change_section(ba: BeforeAfter) -> Section:
    rows = tuple((c.metric, c.point, c.series, c.runs_before, c.runs_after, c.before, c.after, c.change_pct, c.low_pct,
                  c.high_pct, c.spread_pct, c.spread_after_pct, c.spread_df, c.p_adjusted, c.verdict) for c in ba.changes)
    notes = [f"Run {ba.after} against run {ba.before}, each metric's run centre. Each side is the run and its unchanged "
             f"repeats in the store (same campaign, configuration and machine): run {ba.before}'s "
             f"{ba.repeats['before']}, run {ba.after}'s {ba.repeats['after']}; two set-ups are compared by their "
             f"geometric means, each with its own run-to-run spread (Welch; docs/compare.md)."]
    if not ba.same_machine:
        notes.append("The two runs ran on different machines: a change includes the machine's.")
    if not ba.same_campaign:
        notes.append("The two runs ran different campaign files: only the metrics and points both have are compared.")
    if ba.short:
        notes.append(ba.short)
    return Section("before-after", f"Before and after: run {ba.before} → run {ba.after}", " ".join(notes),
                   (Table("changes", "Each metric before and after",
                          ("metric", "point", "series", "runs before", "runs after", "before", "after", "change %",
                           "95 % CI low %", "95 % CI high %", "spread before ± %", "spread after ± %", "df",
                           f"p ({CORRECTION[1]})", "verdict"), rows),))


def trend_section(campaign: str, trends: list[Trend], runs: dict[int, dict]) -> Section:
    blocks: list = [runs_table(runs)]
    for i, t in enumerate(trends):
        rows = tuple(Interval(("◆ machine changed: " if j in t.machine_changes else "")
                              + ("▲ change point: " if j == t.change_at else "") + _run_label(e, runs),
                              e.effect_pct, e.low_pct, e.high_pct, None, t.key[3], e.outcome)
                     for j, e in enumerate(t.runs) if e.effect_pct is not None)
        blocks.append(Forest(f"trend-{i}", t.name, "B − A [% of A]", rows, t.verdict))
    return Section("trend", f"Trend: {campaign} over its runs, oldest first",
                   "Each run's effect and interval in time order (top first), where the machine changed (◆) and a "
                   "detected change point (▲).", tuple(blocks))
