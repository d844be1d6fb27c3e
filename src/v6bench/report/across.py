"""Runs compared with each other: each run's IPv4-against-IPv6 effects
side by side, pooled by a random-effects meta-analysis (:mod:`.meta`),
with how much the runs (machines) disagree and whether a run attribute
explains it (``docs/compare.md``).

A comparison is the same in two runs when its metric, point, B and design
are (:func:`key`): the effect of each run is what its own report states
(:mod:`.verdicts`), B − A in % of A with its 95 % interval. It is pooled on
the log scale, as a ratio, with its own standard error and degrees of
freedom recomputed from the run's values (:mod:`.log_ratio`: A's variance
counts, and nothing is read back from an interval's width); the degrees
of freedom widen its variance to Student's t's (:attr:`RunEffect.log_ratio`).
A run whose comparison has none (not enough repetitions, values equal in
every repetition, a centre that is not positive, 2 df or fewer) is shown
and not pooled.

Pooled verdicts are corrected together (Benjamini–Hochberg over the
pooled comparisons, another family over their heterogeneity tests), the
A/A controls apart from the rest, as a run's report corrects its own
(:data:`.stats.FAMILIES`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from scipy import stats as sps
from statsmodels.stats.multitest import multipletests

from ..core import machine
from ..store.db import Store
from . import data as run_data
from . import meta, nested, verdicts
from .attributes import ATTRIBUTES, attributes
from .stats import ALPHA, CORRECTION, POWER, ratio_pct

def key(pair, comparison) -> tuple[str, str, str, str]:
    """What makes a comparison the same in two runs: metric, point, B, design."""
    return (pair.metric, pair.point, pair.name_b, comparison.design)


def describe_key(k: tuple) -> str:
    metric, point, name_b, design = k
    return f"{metric.split(' [')[0]} {point} ({name_b}, {design})"


#: A run's effect is pooled only on more degrees of freedom than this (:attr:`RunEffect.log_ratio`).
MIN_POOLED_DF = 2


@dataclass(frozen=True)
class RunEffect:
    """One run's effect in one comparison, as its own report states it."""

    run_id: int
    machine: str
    attributes: dict
    started_at_unix_s: float
    effect_pct: float | None
    low_pct: float | None
    high_pct: float | None
    outcome: str
    verdict: str
    n_a: int
    n_b: int
    centre_a: float | None
    centre_b: float | None
    name_a: str
    #: (ln(B/A), its standard error, degrees of freedom) from the run's values (:mod:`.log_ratio`), or None.
    log_effect: tuple[float, float, float] | None = None

    @property
    def log_ratio(self) -> tuple[float, float] | None:
        """(y, sampling variance) on the log-ratio scale, or None: not pooled (module docstring). The
        variance is the squared standard error times ``df / (df − 2)``, the variance of Student's t on
        the run's degrees of freedom: a standard error estimated from few trials is itself uncertain,
        and the run weighs less for it; at 2 df or fewer that variance is not finite, and the run is
        shown, not pooled."""
        if self.log_effect is None or self.log_effect[2] <= MIN_POOLED_DF:
            return None
        y, se, df = self.log_effect
        return y, se * se * df / (df - 2)


@dataclass(frozen=True)
class Moderation:
    """Whether a run attribute explains the runs' differences: the
    mixed-effects fit with the attribute's levels (the first the
    reference), its omnibus test and the share of τ² it explains."""

    attribute: str
    levels: tuple[str, ...]
    #: Each level's pooled effect [%] (the reference's, and each other's from its coefficient).
    level_pct: tuple[float, ...]
    f: float | None
    p: float | None
    tau_pct: float
    r2_pct: float | None
    verdict: str
    #: ``p`` corrected over every comparison's moderator test (Benjamini–Hochberg).
    p_adjusted: float | None = None


@dataclass(frozen=True)
class MachinePool:
    """One machine's runs of a comparison pooled alone (random effects, REML, Hartung–Knapp on
    n − 1 df): what that machine says, beside the pooled effect over machines."""

    machine: str
    runs: int
    pooled_pct: float
    low_pct: float
    high_pct: float


@dataclass(frozen=True)
class Pooled:
    """A comparison present in more than one run."""

    key: tuple
    runs: tuple[RunEffect, ...]
    higher: str
    fit: meta.Fit | None = None
    pooled_pct: float | None = None
    low_pct: float | None = None
    high_pct: float | None = None
    tau_pct: float | None = None
    p_adjusted: float | None = None
    q_p_adjusted: float | None = None
    verdict: str = ""
    moderation: Moderation | None = None
    #: The three-level fit (runs nested in machines) when some machine ran more than one of the runs.
    nested_fit: nested.NestedFit | None = None
    #: Each machine that ran two or more of the pooled runs, its runs pooled alone.
    by_machine: tuple[MachinePool, ...] = ()

    @property
    def p_value(self) -> float | None:
        """The pooled effect's p-value before correction: the nested fit's where there is one."""
        if self.nested_fit is not None:
            return self.nested_fit.p
        return self.fit.p[0] if self.fit is not None else None

    @property
    def df_se(self) -> tuple[int, float]:
        """The pooled effect's degrees of freedom and standard error (log scale): the nested fit's
        (m − 1 for m machines) where there is one, else Hartung–Knapp's on k − 1 (at least 1)."""
        if self.nested_fit is not None:
            return self.nested_fit.df, self.nested_fit.se
        return max(self.fit.q_df, 1), self.fit.se[0]

    @property
    def used(self) -> list[RunEffect]:
        return [r for r in self.runs if r.log_ratio is not None]

    @property
    def machines(self) -> list[str]:
        """The machines among the runs, as the moderator groups them (:func:`..core.machine.group`)."""
        return list(dict.fromkeys(r.attributes["machine"] for r in self.runs))


@dataclass
class Across:
    """Every comparison of the runs, keyed by :func:`key`."""

    run_ids: tuple[int, ...]
    runs: dict[int, dict] = field(default_factory=dict)
    effects: dict[tuple, list[RunEffect]] = field(default_factory=dict)
    higher: dict[tuple, str] = field(default_factory=dict)
    #: The comparisons that are A/A controls (a family's second flow against its first): corrected apart.
    controls: set = field(default_factory=set)


#: A run's comparisons, read once a process (``compare A B`` reads A and B for the pooled view and again
#: for before/after): (store, run id, finish time) → (run, [(key, higher, effect)]).
_read: dict[tuple, tuple[dict, list]] = {}


def _run_effects(store: Store, run_id: int) -> tuple[dict, list]:
    run = store.run(run_id)
    cache_key = (store.where, run_id, run.get("uid"), run.get("finished_at_unix_s"))
    if cache_key not in _read:
        d = run_data.load(store, run_id)
        label = machine.label(d.run["environment"])
        attrs = attributes(d.run)
        _read[cache_key] = (d.run, [(key(p, c), p.higher, p.control, RunEffect(
            run_id, label, attrs, d.run["started_at_unix_s"], c.diff_pct, c.ci_low_pct, c.ci_high_pct, c.outcome,
            c.verdict, c.n_a, c.n_b, c.center_a, c.center_b, p.name_a, c.log_ratio)) for p, c in verdicts.of(d).values()])
    return _read[cache_key]


def collect(store: Store, run_ids: list[int]) -> Across:
    """Each run's comparisons, as its report decides them."""
    out = Across(tuple(run_ids))
    for run_id in run_ids:
        run, effects = _run_effects(store, run_id)
        out.runs[run_id] = run
        for k, higher, control, e in effects:
            out.higher[k] = higher
            out.effects.setdefault(k, []).append(e)
            if control:
                out.controls.add(k)
    return out


def _words(higher: str, effect: float) -> str:
    lower = "lower" if higher == "higher" else {"slower": "faster", "more": "less"}.get(higher, f"not {higher}")
    return higher if effect > 0 else lower


def _each_differs(p: Pooled) -> int:
    """+1 or −1 when every run's own report found B differ from A in that
    direction (its corrected verdict), else 0."""
    signs = {1 if r.effect_pct > 0 else -1 for r in p.runs if r.outcome == "differs"}
    return next(iter(signs)) if len(signs) == 1 and all(r.outcome == "differs" for r in p.runs) else 0


def _detectable_pct(p: Pooled) -> float:
    """The smallest pooled difference [%] the runs could have shown: (t₁₋α/₂ + t_power) × SE, on k − 1
    degrees of freedom, or m − 1 with runs nested in m machines."""
    df, se = p.df_se
    return ratio_pct((float(sps.t.ppf(1 - ALPHA / 2, df)) + float(sps.t.ppf(POWER, df))) * se)


#: The spread between runs or machines (τ, in % of the ratio) that "no more spread between … than
#: within" must have been able to see with :data:`.stats.POWER`: the 1 % v6bench's paired designs resolve.
#: Where Q could not, the verdict says "too few … to tell" (docs/compare.md).
TAU_STATED_PCT = 1.0


def _agreement(p: Pooled, who: str, spread: str) -> tuple[bool, str]:
    """Whether the runs may be called in agreement, and the words: only
    where Cochran's Q test could have seen a τ of :data:`TAU_STATED_PCT`
    (:func:`.meta.detectable_tau`), giving the τ it could have seen."""
    seen = ratio_pct(meta.detectable_tau([r.log_ratio[1] for r in p.used], POWER))
    if seen <= TAU_STATED_PCT:
        return True, f"no more spread between {who}s than within (Q could have seen τ ≥ {seen:.2f} %; {spread})"
    return False, (f"too few {who}s to tell whether they differ (Q could have seen only τ ≥ {seen:.2f} %, not "
                   f"{TAU_STATED_PCT:g} %; {spread})")


def _verdict(p: Pooled) -> str:
    name_b, higher = p.key[2], p.higher
    if p.fit is None:
        if p.runs and all(r.effect_pct == 0 and r.low_pct == 0 and r.high_pct == 0 for r in p.runs):
            return "the same in every run: no difference (values equal in every repetition)"
        return f"not pooled: {len(p.used)} run(s) with an interval (pooling needs 2)"
    noun = "machine" if len(p.machines) > 1 else "run"
    who = noun if noun == "machine" else "run (one machine)"
    nest = (f"; runs nested in {p.nested_fit.m} machines, t with {p.nested_fit.df} df" if p.nested_fit is not None
            else "")
    pooled = (f"pooled {p.pooled_pct:+.2f} % ({p.low_pct:+.2f} … {p.high_pct:+.2f}; {CORRECTION[1]} p = "
              f"{p.p_adjusted:.2g}{nest})")
    spread = f"τ = {p.tau_pct:.2g} %, I² = {p.fit.i2_pct:.0f} %, Q p = {p.q_p_adjusted:.2g}"
    differs = p.p_adjusted is not None and p.p_adjusted < ALPHA
    heterogeneous = p.q_p_adjusted is not None and p.q_p_adjusted < ALPHA
    found = {1 if r.effect_pct > 0 else -1 for r in p.runs if r.outcome == "differs"}
    each = _each_differs(p)
    if found == {1, -1}:
        return (f"runs disagree: some find {name_b} {_words(higher, 1)}, some {_words(higher, -1)} "
                f"({pooled}; {spread})")
    if each:  # every run's own (corrected) verdict: the direction holds on each of these machines
        df = p.df_se[0]
        undecided = "" if differs else (f"; the pooled difference is not significant after the correction ({p.fit.k} "
                                        f"runs, t with {df} df)")
        between = f"{noun}s differ by {spread}" if heterogeneous else _agreement(p, noun, spread)[1]
        return f"{name_b} {_words(higher, each)} on every {who}: {pooled}, {between}{undecided}"
    if heterogeneous:
        if differs:
            return f"{name_b} {_words(higher, p.pooled_pct)} pooled over runs, {pooled}, but runs disagree in size ({spread})"
        return f"runs disagree in size: {pooled} ({spread})"
    agree, words = _agreement(p, noun, spread)
    lead = f"consistent across {noun}s: " if agree else ""
    if differs:
        return f"{lead}{name_b} {_words(higher, p.pooled_pct)}, {pooled}; {words}"
    return f"{lead}no difference detected, {pooled} (could have detected ±{_detectable_pct(p):.2g} %); {words}"


def _moderation(p: Pooled, attribute: str) -> Moderation | None:
    """The mixed-effects fit with ``attribute``'s levels; its verdict is
    worded once every comparison's is fitted (:func:`_moderation_words`)."""
    used = p.used
    levels = [r.attributes.get(attribute, "?") for r in used]
    m, order = meta.dummies(levels)
    if len(order) < 2:
        return None
    ys = [r.log_ratio[0] for r in used]
    vs = [r.log_ratio[1] for r in used]
    if len(used) <= len(order):
        return Moderation(attribute, order, (), None, None, 0.0, None,
                          f"not tested: {len(used)} runs for {len(order)} levels of {attribute} (needs more runs than levels)")
    f = meta.fit(ys, vs, m)
    base = f.beta[0]
    level_pct = tuple([ratio_pct(base)] + [ratio_pct(base + b) for b in f.beta[1:]])
    r2 = 100 * max(0.0, (p.fit.tau2 - f.tau2) / p.fit.tau2) if p.fit and p.fit.tau2 > 0 else None
    return Moderation(attribute, order, level_pct, f.moderator_f, f.moderator_p, 100 * f.tau, r2, "")


def _moderation_words(m: Moderation, p_adjusted: float | None) -> Moderation:
    """``m`` with its verdict, from its F test's p corrected over every
    comparison's moderator test (Benjamini–Hochberg, as every family of
    verdicts)."""
    if m.verdict:  # not tested
        return m
    explains = p_adjusted is not None and p_adjusted < ALPHA
    shown = f"{p_adjusted:.2g}" if p_adjusted is not None else "—"
    verdict = (f"{m.attribute} explains the differences ({CORRECTION[1]} F p = {shown}" if explains
               else f"{m.attribute} does not explain the differences ({CORRECTION[1]} F p = {shown}")
    verdict += f"; τ left {m.tau_pct:.2g} %" + (f", R² = {m.r2_pct:.0f} %)" if m.r2_pct is not None else ")")
    return replace(m, p_adjusted=p_adjusted, verdict=verdict)


def _machine_pools(used: list[RunEffect]) -> tuple[MachinePool, ...]:
    """Each machine with two or more pooled runs: its runs alone, by :func:`.meta.fit`."""
    out = []
    for name in dict.fromkeys(r.attributes["machine"] for r in used):
        mine = [r for r in used if r.attributes["machine"] == name]
        if len(mine) >= 2:
            f = meta.fit([r.log_ratio[0] for r in mine], [r.log_ratio[1] for r in mine])
            (lo, hi), = f.beta_ci
            out.append(MachinePool(name, len(mine), ratio_pct(f.beta[0]), ratio_pct(lo), ratio_pct(hi)))
    return tuple(out)


def pool(a: Across, by: str | None = None) -> list[Pooled]:
    """Every comparison present in more than one run, pooled (module
    docstring); ``by``: a run attribute (:data:`ATTRIBUTES`) as moderator."""
    if by is not None and by not in ATTRIBUTES:
        raise ValueError(f"{by!r} is not one of {ATTRIBUTES}")
    out = []
    for k, effs in a.effects.items():
        if len({e.run_id for e in effs}) < 2:
            continue
        p = Pooled(k, tuple(effs), a.higher[k])
        used = p.used
        if len(used) >= 2:
            ys, vs = [r.log_ratio[0] for r in used], [r.log_ratio[1] for r in used]
            f = meta.fit(ys, vs)
            (lo, hi), = f.beta_ci
            centre, tau = f.beta[0], f.tau
            machines = [r.attributes["machine"] for r in used]
            nf = None
            if 2 <= len(set(machines)) < len(used):  # some machine ran several: runs nested in machines
                nf = nested.fit(ys, vs, machines)
                centre, (lo, hi), tau = nf.mu, nf.ci, math.sqrt(nf.sigma2_machine + nf.sigma2_run)
            p = Pooled(k, tuple(effs), a.higher[k], f, ratio_pct(centre), ratio_pct(lo), ratio_pct(hi), 100 * tau, nested_fit=nf,
                       by_machine=_machine_pools(used))
        out.append(p)
    for control in (False, True):  # the A/A controls corrected apart, as a run's report corrects them
        fitted = [i for i, p in enumerate(out) if p.fit is not None and (p.key in a.controls) == control]
        if not fitted:
            continue
        padj = multipletests([out[i].p_value for i in fitted], alpha=ALPHA, method=CORRECTION[0])[1]
        qs = [(i, out[i].fit.q_p) for i in fitted if out[i].fit.q_p is not None]
        qadj = dict(zip([i for i, _ in qs], multipletests([q for _, q in qs], alpha=ALPHA, method=CORRECTION[0])[1])) if qs else {}
        for i, pa in zip(fitted, padj):
            out[i] = replace(out[i], p_adjusted=float(pa), q_p_adjusted=float(qadj.get(i, 1.0)))
    out = [replace(p, verdict=_verdict(p), moderation=_moderation(p, by) if by and p.fit is not None else None)
           for p in out]
    tested = [i for i, p in enumerate(out) if p.moderation is not None and p.moderation.p is not None]
    madj = dict(zip(tested, multipletests([out[i].moderation.p for i in tested], alpha=ALPHA,
                                          method=CORRECTION[0])[1])) if tested else {}
    return [replace(p, moderation=_moderation_words(p.moderation, float(madj[i]) if i in madj else None))
            if p.moderation is not None else p for i, p in enumerate(out)]


def select(pooled: list[Pooled], text: str | None) -> list[Pooled]:
    """The comparisons whose description contains ``text`` (all for None; case-insensitive)."""
    if not text:
        return pooled
    return [p for p in pooled if text.lower() in describe_key(p.key).lower()]

