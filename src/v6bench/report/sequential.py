"""Sequential comparisons: repetitions added only until a comparison is
decided, with intervals and p-values that stay valid whatever the
stopping (docs/report.md, "Sequential comparisons").

The method: **repeated confidence intervals with an alpha-spending
function, combined by the union bound.** A comparison is looked at after
each new repetition from ``min_n`` (the fewest a verdict takes) to
``max_n``. Look k at n repetitions gets its own share of α, spent by the
power family α·((n / max_n)^ρ − (n' / max_n)^ρ), n' the previous look's
n (0 before the first): ρ = 3 spends little early and most at the end,
as O'Brien–Fleming's boundaries do (Lan & DeMets 1983; Jennison &
Turnbull 2000, §7.2 and ch. 9). At look k the comparison's own interval
is computed at level 1 − α_k (:func:`.stats.compare` with ``alpha``):
the same estimator and test the report uses without a sequence, so each
look's interval is exact for its data's kind. Because the shares sum to
α, the chance that any look's interval misses the true effect is at
most α (Bonferroni), so the interval of whichever look the run stopped
at covers with at least 1 − α, for any stopping rule; no joint normal
distribution of the looks is assumed, which makes it conservative
beside exact group-sequential boundaries (it spends as if the looks
were independent).

The sequential p-value is min over the looks so far of p_k · α / α_k
(capped at 1): P(it is ≤ u) ≤ Σ u·α_k/α = u under no difference, so it
enters the Benjamini–Hochberg correction as any p-value does.

Stopping (:func:`state`): "differs" once a look's interval excludes 0,
"within precision" once it lies inside ± ``precision_pct``, "maximum"
at ``max_n``, else "undecided".
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .stats import ALPHA, Comparison, compare


@dataclass(frozen=True)
class Design:
    """A sequential comparison's plan: the first and last look [repetitions
    a side, or pairs], the spending exponent ρ and the precision [% of A]
    at which a comparison counts as decided without a difference."""

    min_n: int
    max_n: int
    rho: float = 3.0
    precision_pct: float | None = None

    def __post_init__(self) -> None:
        if not 2 <= self.min_n <= self.max_n:
            raise ValueError(f"looks from {self.min_n} to {self.max_n}: need 2 <= min_n <= max_n")
        if self.rho <= 0:
            raise ValueError(f"spending exponent {self.rho}: must be positive")
        if self.precision_pct is not None and self.precision_pct <= 0:
            raise ValueError(f"precision {self.precision_pct} %: must be positive")

    def alpha_at(self, n: int) -> float:
        """α spent at the look with ``n`` repetitions (0 outside the looks)."""
        if not self.min_n <= n <= self.max_n:
            return 0.0
        before = 0.0 if n == self.min_n else ((n - 1) / self.max_n) ** self.rho
        return ALPHA * ((n / self.max_n) ** self.rho - before)


def look(a: list[float], b: list[float], design: Design, **kw) -> Comparison:
    """The comparison of the first ``n`` repetitions (``len(a)``, and
    ``len(b)`` unless paired) at its look's level, 1 − α_n; below the
    first look, the comparison as :func:`.stats.compare` gives it ("not
    enough repetitions")."""
    n = min(len(a), len(b))
    if n < design.min_n:
        return compare(a, b, **kw)
    return compare(a, b, alpha=design.alpha_at(min(n, design.max_n)), **kw)


def state(c: Comparison, design: Design, n: int) -> str:
    """Whether a look decided: "differs" (the interval excludes 0),
    "within precision" (it lies inside ± ``precision_pct``), "maximum"
    (the last look), else "undecided"."""
    lo, hi = c.ci_low_pct, c.ci_high_pct
    if lo is not None and hi is not None and n >= design.min_n:
        if lo > 0 or hi < 0:
            return "differs"
        if design.precision_pct is not None and -design.precision_pct < lo and hi < design.precision_pct:
            return "within precision"
    return "maximum" if n >= design.max_n else "undecided"


def sequential_p(ps: list[tuple[int, float]], design: Design) -> float:
    """The sequential p-value from each look's (n, p): min p_n · α / α_n."""
    used = [p * ALPHA / design.alpha_at(n) for n, p in ps if design.alpha_at(n) > 0]
    return min([1.0, *used])


def compare_sequence(a: list[float], b: list[float], design: Design, **kw) -> tuple[Comparison, str]:
    """``a`` and ``b`` in the order they were measured, compared as a
    sequential design would have looked at them: each look from
    ``min_n`` on, stopped at the first decided one; the comparison at that
    look (its interval at 1 − α_n) with the sequential p-value, and the
    state it stopped in."""
    n_all = min(len(a), len(b), design.max_n)
    if n_all < design.min_n:
        return compare(a[:n_all], b[:n_all], **kw), "undecided"
    ps: list[tuple[int, float]] = []
    for n in range(design.min_n, n_all + 1):
        c = look(a[:n], b[:n], design, **kw)
        if c.p is not None:
            ps.append((n, c.p))
        s = state(c, design, n)
        if s != "undecided":
            break
    else:
        s = "undecided"
    return (replace(c, p=sequential_p(ps, design)) if ps else c), s


def key_text(key: tuple) -> str:
    """A comparison's key (metric, point, B's name) as the run records it."""
    return " | ".join(key)


@dataclass(frozen=True)
class Record:
    """What a sequential run recorded of its design (``environment.design``):
    ``max_blocks``, ``precision_pct``, each extended test's first look
    (its blocks as given), and the looks: after each block, each
    comparison's test and p-value at that look (campaign/looks.py)."""

    max_blocks: int
    precision_pct: float | None
    first_look: dict[str, int]
    history: dict[str, list[tuple[int, int, float]]]
    #: The tests a time budget stopped undecided.
    out_of_budget: frozenset[int] = frozenset()

    @classmethod
    def of(cls, run: dict) -> Record | None:
        """A run's record (None for a run not designed sequentially)."""
        design = (run.get("environment") or {}).get("design") or {}
        seq = design.get("sequential")
        if not seq:
            return None
        history: dict[str, list[tuple[int, int, float]]] = {}
        for entry in design.get("looks", []):
            for k, (test, p) in entry["p"].items():
                history.setdefault(k, []).append((entry["block"], test, p))
        return cls(seq["max_blocks"], seq.get("precision_pct"), seq["first_look"], history,
                   frozenset(design.get("out_of_budget", [])))

    def ran_out(self, key: tuple) -> bool:
        """Whether the comparison's test was stopped by the time budget, undecided."""
        h = self.history.get(key_text(key))
        return bool(h) and h[-1][1] in self.out_of_budget

    def design(self, test_index: int) -> Design:
        return Design(self.first_look[str(test_index)], self.max_blocks, precision_pct=self.precision_pct)

    def looks(self, key: tuple) -> tuple[Design, list[tuple[int, float]]] | None:
        """A comparison's design and looks, (block, p) in order; None where
        the run never looked at it (a test not extended)."""
        h = self.history.get(key_text(key))
        if not h:
            return None
        return self.design(h[-1][1]), [(block, p) for block, _, p in h]
