"""A sequential campaign's looks (``[design] sequential = true``;
docs/methods.md, "Sequential designs"): after each repetition block, each
test that may still add blocks has its comparisons computed at that
block's level (report/sequential.py: repeated confidence intervals, the
spending over the blocks from the test's own count to ``max_blocks``);
a test whose comparisons are all decided (an interval excluding 0, one
inside the precision, or a line-limited throughput) runs no more blocks.
Each look's p-values and the stopped tests are recorded with the run's
design, so that the report states each comparison at its last look with
the sequential p-value, and a resumed run skips what was stopped.

A time budget (``v6bench run --budget 2h``) gives every test its own
blocks first (no test is cut below them), then blocks to the undecided
ones while the time left holds another block as long as the last one
took; the tests still undecided then stop and are recorded as out of
budget, which the report says comparison by comparison.
"""

from __future__ import annotations

import time

from ..report import data as run_data
from ..store.db import Store
from .model import Campaign, TestSpec
from .plan import ScheduledTest


def record(c: Campaign, budget_s: float | None = None) -> dict | None:
    """What a new run records of its sequential design and its time budget
    [s] (None for a run that is not sequential)."""
    if not c.design.sequential:
        return None
    from ..report import sequential  # the statistics only where a run is sequential: every command imports this module
    return {"max_blocks": c.design.max_blocks, "precision_pct": c.design.precision_pct, "rho": sequential.Design.rho,
            "first_look": {str(t.index): t.matrix.blocks for t in c.tests if extended(c, t)},
            **({"budget_s": budget_s} if budget_s else {})}


def extended(c: Campaign, t: TestSpec) -> bool:
    """Whether test ``t`` may run blocks beyond its own count."""
    return c.design.blocks(t.matrix.blocks) > t.matrix.blocks


class Looker:
    """Looks at a sequential run as its blocks end. ``runs(p)``: whether
    point ``p`` still runs (its test not stopped), looking first at every
    block that ended before ``p``'s; :meth:`finish` looks at the last one."""

    def __init__(self, c: Campaign, store: Store, run_id: int | None, budget_s: float | None = None) -> None:
        self.c, self.store, self.run_id = c, store, run_id
        env = store.run(run_id)["environment"] if run_id is not None else {}
        design = env.get("design") or {}
        self.stopped: set[int] = set(design.get("stopped", []))
        self.out_of_budget: set[int] = set(design.get("out_of_budget", []))
        self.block = max((e["block"] for e in design.get("looks", [])), default=0)
        self.budget_s = (design.get("sequential") or {}).get("budget_s", budget_s)
        self.spent_before_s = float((env.get("time_s") or {}).get("wall", 0.0))  # earlier sessions of a resumed run
        self.started = self.block_started = time.monotonic()

    def runs(self, p: ScheduledTest, run_id: int | None = None) -> bool:
        if run_id is not None:
            self.run_id = run_id
        if self.c.design.sequential and self.run_id is not None:
            while self.block < p.repetition - 1:
                self._look(self.block + 1)
        return p.test.index not in self.stopped

    def finish(self) -> None:
        """The look after the run's last block."""
        if self.c.design.sequential and self.run_id is not None:
            last = max((t.repetition for t in run_data.load(self.store, self.run_id).tests), default=0)
            while self.block < last:
                self._look(self.block + 1)

    def _look(self, block: int) -> None:
        assert self.run_id is not None
        d = run_data.load(self.store, self.run_id)
        p_of: dict[str, list] = {}
        looked = [t for t in self.c.tests if extended(self.c, t) and t.index not in self.stopped
                  and block >= t.matrix.blocks]
        self.stopped |= {t.index for t in looked if decided(d, t, self.c, block, p_of)}
        self._spend([t.index for t in looked if t.index not in self.stopped])
        if looked:
            env = self.store.run(self.run_id)["environment"]
            design = env.setdefault("design", {})
            design.setdefault("looks", []).append({"block": block, "p": p_of})
            design["stopped"] = sorted(self.stopped)
            if self.out_of_budget:
                design["out_of_budget"] = sorted(self.out_of_budget)
            self.store.set_environment(self.run_id, env)
        self.block = block

    def _spend(self, undecided: list[int]) -> None:
        """With a budget: stops the ``undecided`` tests (past their own
        blocks) when the time left would not hold another block as long as
        the one that just ended."""
        now = time.monotonic()
        block_s, self.block_started = now - self.block_started, now
        if not self.budget_s or not undecided:
            return
        left_s = self.budget_s - self.spent_before_s - (now - self.started)
        if left_s < block_s:
            self.stopped |= set(undecided)
            self.out_of_budget |= set(undecided)


def decided(d: run_data.RunData, t: TestSpec, c: Campaign, block: int, p_of: dict[str, list]) -> bool:
    """Whether every comparison drawn from test ``t``'s points is decided at
    ``block`` (its look), each one's p-value added to ``p_of``; a test
    whose points give no comparison is decided (nothing to add blocks for)."""
    from ..report import sequential, verdicts  # as in record()
    mine = run_data.RunData(d.run, d.selftest, tuple(x for x in d.tests if x.test_index == t.index), d.unfinished)
    design = sequential.Design(t.matrix.blocks, c.design.blocks(t.matrix.blocks), precision_pct=c.design.precision_pct)
    states = []
    for key, (_, cmp) in verdicts.at_level(mine, design.alpha_at(block)).items():
        if cmp.outcome == "line":
            continue
        if cmp.p is not None:
            p_of[sequential.key_text(key)] = [t.index, cmp.p]
        states.append(sequential.state(cmp, design, block))
    return all(s != "undecided" for s in states)
