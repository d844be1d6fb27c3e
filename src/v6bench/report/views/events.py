"""Tests of events rather than steady load: reset (RFC 2544 §26.6; seed 000
Tables 7–8, the reset kinds compared by one-way ANOVA), back-to-back
frames (RFC 9004) and system recovery (RFC 2544 §26.5)."""

from __future__ import annotations

from ..data import RunData
from ..model import Figure, Section, Series, Table
from ..stats import DESCRIPTION_COLUMNS, anova, describe
from ..group import mean


def reset(data: RunData) -> Section | None:
    tests = data.of("reset")
    if not tests:
        return None
    kinds = list(dict.fromkeys(k for t in tests for k in t.result.get("kinds", {})))
    times: dict[tuple[str, str], dict[str, list[float]]] = {}
    for t in tests:
        for k, r in t.result.get("kinds", {}).items():
            for rep in r["repetitions"]:
                if rep.get("tester_limited"):
                    continue
                for v, f in rep.get("families", {}).items():
                    if f.get("reset_time_s") is not None:
                        times.setdefault((t.label(size=True), f"IPv{v}"), {}).setdefault(k, []).append(1e3 * f["reset_time_s"])
    rows, anova_rows, series = [], [], []
    for (point, fam), by_kind in times.items():
        series.append(Series(f"{point} {fam}", tuple(range(len(kinds))), tuple(mean(by_kind.get(k, [])) for k in kinds), "bar"))
        for k, xs in by_kind.items():
            rows.append((point, fam, k, ", ".join(f"{x:.1f}" for x in xs)) + describe(xs).row())
        a = anova(by_kind)
        anova_rows.append((point, fam, " vs ".join(by_kind), a.f, a.p, a.verdict))
    return Section("reset", "Reset time by reset kind",
                   "How long each family's traffic stopped when the router was reset (RFC 2544 §26.6): from the last "
                   "frame forwarded before the reset to the first after it.",
                   (Figure("reset-times", "Mean reset time by reset kind", "reset kind", "reset time [ms]", tuple(series),
                           x_categories=tuple(kinds)),
                    Table("reset-times", "Reset time per repetition (ms)",
                          ("point", "family", "reset kind", "repetitions [ms]") + tuple(
                              f"{c} [ms]" if c in ("min", "max", "mean", "mode", "stddev") else c for c in DESCRIPTION_COLUMNS),
                          tuple(rows), "Seed 000 Table 7."),
                    Table("reset-anova", "Reset kinds compared: one-way ANOVA",
                          ("point", "family", "groups", "F", "p", "verdict"), tuple(anova_rows), "Seed 000 Table 8.")))


def bursts_and_recovery(data: RunData) -> Section | None:
    rows = []
    for t in data.of("back-to-back", applicable_only=False):
        r = t.result
        if r.get("applicable") is False or "average_frames" not in r:
            rows.append(("back-to-back", t.label(size=True), r.get("reason", "not applicable"), None, None, None))
            continue
        rows.append(("back-to-back", t.label(size=True), "tester-limited" if r.get("tester_limited") else "",
                     r["average_frames"], r.get("implied_buffer_time_s"), r.get("corrected_buffer_time_s")))
    rec_rows = []
    for t in data.of("recovery", applicable_only=False):
        r = t.result
        if r.get("applicable") is False:
            rec_rows.append((t.label(size=True), r.get("reason", "not applicable"), None, None, None))
            continue
        for v, s in r.get("recovery", {}).items():
            rec_rows.append((t.label(size=True), f"IPv{v}", s.get("mean_s"), s.get("min_s"), s.get("max_s")))
    blocks = []
    if rows:
        blocks.append(Table("back-to-back", "Back-to-back frames (RFC 9004)",
                            ("test", "point", "note", "average burst [frames]", "implied buffer time [s]",
                             "corrected buffer time [s]"), tuple(rows)))
    if rec_rows:
        blocks.append(Table("recovery", "System recovery (RFC 2544 §26.5)",
                            ("point", "family or note", "recovery time mean [s]", "min [s]", "max [s]"), tuple(rec_rows)))
    if not blocks:
        return None
    return Section("bursts", "Back-to-back frames and system recovery", "", tuple(blocks))
