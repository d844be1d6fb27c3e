"""IPv4 against IPv6, metric by metric: the effect with its interval, the
test, the corrected verdict (:mod:`..verdicts`), and descriptive
statistics of every series compared (:mod:`..samples` says what a value is)."""

from __future__ import annotations

from .. import family_pairs, scenario_pairs, verdicts
from ..data import RunData
from ..model import Forest, Interval, Section, Table
from ..stats import ALPHA, COMPARISON_COLUMNS, CORRECTION, DESCRIPTION_COLUMNS, MIN_PAIRS, MIN_REPETITIONS, POWER, describe

#: The summary's words for each outcome (:data:`..stats.OUTCOMES`), in its order.
OUTCOME_NAMES = {"differs": "differs (after the correction)", "none": "no difference detected",
                 "few": "not enough repetitions (or lab builds)",
                 "line": "line-limited: the link's throughput, no verdict on the router", "other": "not comparable"}

HOW_TO_READ = (
    f"One value per repetition: a search's NDR or PDR (difference of means; Welch's interval and t-test, the search's "
    f"resolution counted in its variance), a trial's median latency or a reset time (Hodges–Lehmann ratio, the median "
    f"of all pairwise ratios; exact Mann–Whitney test and interval). Design 'paired': both families in every trial "
    f"(a mixed stream), each trial's own ratio IPv6/IPv4 the unit (Hodges–Lehmann estimate of the ratios, exact "
    f"Wilcoxon signed-rank test and interval): what moved a trial moved both. Design 'mix regression': the DUT's CPU "
    f"time per forwarded frame in trials at several IPv6 shares, interleaved in repetition blocks, fitted as a level "
    f"per block plus a slope over the share (OLS); the slope is IPv6's extra cost, its t interval and test. "
    f"B − A in % of A's centre (IPv4's, or "
    f"the reference scenario's) with its 95 % interval. Every comparison of the report is corrected together "
    f"({CORRECTION[1]}, false discovery rate {ALPHA:g}), the A/A controls among themselves; "
    f"'differs' needs {MIN_REPETITIONS} or more repetitions a side ({MIN_PAIRS} pairs when paired) and a corrected p "
    f"below {ALPHA:g}. Scenarios built as separate labs are compared lab build by lab build (one value a build: "
    f"its trials' mean, or median for delays), and need {MIN_REPETITIONS} builds a side. A throughput at the path's "
    f"line rate is the link's: 'line-limited', never a verdict on the router. 'No difference "
    f"detected' gives the smallest difference the run could have detected ({POWER:.0%} power): a larger one would "
    f"most likely have shown. Values the tester limited are left out and counted.")


def comparisons(data: RunData) -> Section | None:
    decided = verdicts.of(data)
    pairs = family_pairs.families(data)
    rows, desc = [], []
    for p in pairs:
        for name in sorted(p.values):
            desc.append((p.metric, p.point, name) + describe(p.values[name]).row())
        if p.key in decided:
            rows.append((p.metric, p.point) + decided[p.key][1].row())
    if not desc and not rows and not decided:
        return None
    blocks = []
    if decided:
        blocks.append(forest(list(decided.values())))
        blocks.append(summary(list(decided.values())))
    if rows:
        blocks.append(Table("ipv4-vs-ipv6", "IPv4 against IPv6", ("metric", "point") + COMPARISON_COLUMNS, tuple(rows),
                            "A is IPv4, B IPv6. " + HOW_TO_READ))
    flow_pairs = [p for p in family_pairs.flow_pairs(data) if p.key in decided]
    scoped = [(p.metric, p.point, p.name_b.removeprefix("flow 2: ")) + decided[p.key][1].row()
              for p in flow_pairs if not p.control]
    if scoped:
        blocks.append(Table("flow-scenarios", "Scenarios inside the trial: a family's flow 2 meets the scenario, "
                            "flow 1 is its control", ("metric", "point", "scenario (B)") + COMPARISON_COLUMNS,
                            tuple(scoped), "A is a family's first flow, B its second, the same frames in the same "
                            "trials (flows = 2); only B meets the scenario (a DUT scenario or extension headers "
                            "scoped to flow 2). " + HOW_TO_READ))
    flows = [(p.metric, p.point) + decided[p.key][1].row() for p in flow_pairs if p.control]
    if flows:
        blocks.append(Table("flow-controls", "A/A controls inside the trial: a family's two identical flows",
                            ("metric", "point") + COMPARISON_COLUMNS, tuple(flows),
                            "A is a family's first flow, B its second, the same frames in the same trials "
                            "(flows = 2): no difference exists, and none should be found. " + HOW_TO_READ))
    scen = [(p.metric, p.point, p.name_b, p.name_a) + decided[p.key][1].row() for p in scenario_pairs.scenario_searches(data)
            if p.key in decided]
    if scen:
        blocks.append(Table("scenarios", "Scenarios against their reference",
                            ("metric", "point", "scenario (B)", "reference (A)") + COMPARISON_COLUMNS, tuple(scen),
                            "Each scenario against the scenario it is an A/A control of, else the one it names "
                            "(compare_with), else the run's first (delays: the delay section). " + HOW_TO_READ))
    blocks.append(Table("descriptive", "Descriptive statistics over repetitions",
                        ("metric", "point", "family") + DESCRIPTION_COLUMNS, tuple(desc),
                        "Mode: the most frequent value when a value repeats. Skewness and excess kurtosis within ±2 is "
                        "seed 000's test of normality before an ANOVA."))
    return Section("statistics", "Is the difference real?",
                   "Each comparison as a difference in percent with its 95 % confidence interval, a test, and a verdict "
                   f"corrected for the number of comparisons ({CORRECTION[1]}).", tuple(blocks))


def _name(p) -> str:
    """A comparison in words: metric, point, B against A."""
    return f"{p.metric.split(' [')[0]} {p.point} ({p.name_b} vs {p.name_a})"


def forest(compared: list) -> Forest:
    """The answer as a picture: every comparison of the run, in the order
    the tables give them, as B − A in % of A with its 95 % interval, the
    band ± the difference it could have detected, the design marked."""
    rows = tuple(Interval(_name(p), c.diff_pct, c.ci_low_pct, c.ci_high_pct, c.mde_pct, c.design, c.outcome)
                 for p, c in compared if c.diff_pct is not None)
    return Forest("forest", "Every comparison: B − A with its 95 % interval", "B − A [% of A]", rows,
                  "A dot is the effect, the line its 95 % interval, the grey band what the run could have detected "
                  "(80 % power); shape: the design (filled circle paired, open square unpaired, diamond mix "
                  "regression); colour: red differs (after the correction), blue no difference detected, grey too few "
                  "repetitions. The colour is the corrected verdict, the interval is not corrected. The axis is linear within "
                  "±1 % and logarithmic beyond; an interval beyond it ends in an arrowhead. Comparisons with no effect to show "
                  "(not measured for both) are in the tables only.")


def summary(compared: list) -> Table:
    """The answer first: how many comparisons show a real difference, and which."""
    rows = []
    for outcome, name in OUTCOME_NAMES.items():
        hits = [(p, c) for p, c in compared if c.outcome == outcome]
        if hits:
            listed = "; ".join(_name(p) + (f": {c.diff_pct:+.1f} %" if c.diff_pct is not None else "")
                               for p, c in hits[:12])
            rows.append((name, len(hits), listed + (f"; … {len(hits) - 12} more" if len(hits) > 12 else "")))
    limited = sum(p.excluded for p, _ in compared)
    if limited:
        rows.append(("values left out (tester-limited or suspect)", limited, "not the DUT's: never compared"))
    return Table("summary", "Summary", ("outcome", "comparisons", "which (B − A)"), tuple(rows),
                 f"Every comparison of the run by its verdict, {CORRECTION[1]}-corrected together (details in the "
                 "tables that follow).")
