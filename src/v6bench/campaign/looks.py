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
"""

from __future__ import annotations

from ..report import data as run_data
from ..store.db import Store
from .model import Campaign, TestSpec
from .plan import ScheduledTest


def record(c: Campaign) -> dict | None:
    """What a new run records of its sequential design (None for a run that is not)."""
    if not c.design.sequential:
        return None
    from ..report import sequential  # the statistics only where a run is sequential: every command imports this module
    return {"max_blocks": c.design.max_blocks, "precision_pct": c.design.precision_pct, "rho": sequential.Design.rho,
            "first_look": {str(t.index): t.matrix.blocks for t in c.tests if extended(c, t)}}


def extended(c: Campaign, t: TestSpec) -> bool:
    """Whether test ``t`` may run blocks beyond its own count."""
    return c.design.blocks(t.matrix.blocks) > t.matrix.blocks


class Looker:
    """Looks at a sequential run as its blocks end. ``runs(p)``: whether
    point ``p`` still runs (its test not stopped), looking first at every
    block that ended before ``p``'s; :meth:`finish` looks at the last one."""

    def __init__(self, c: Campaign, store: Store, run_id: int | None) -> None:
        self.c, self.store, self.run_id = c, store, run_id
        design = (store.run(run_id)["environment"].get("design") or {}) if run_id is not None else {}
        self.stopped: set[int] = set(design.get("stopped", []))
        self.block = max((e["block"] for e in design.get("looks", [])), default=0)

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
        if looked:
            env = self.store.run(self.run_id)["environment"]
            design = env.setdefault("design", {})
            design.setdefault("looks", []).append({"block": block, "p": p_of})
            design["stopped"] = sorted(self.stopped)
            self.store.set_environment(self.run_id, env)
        self.block = block


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
