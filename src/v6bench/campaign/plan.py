"""A campaign run's order: the matrix expanded, in file order, to one
*point* per test × direction × mix × frame size × repetition (a
host-stack test's variant in place of a frame size), each with a stable
key; :func:`schedule` orders the points for a run (randomized repetition
blocks, so that drift over a run cannot read as a difference between the
series a report compares); the order and its seed are recorded with the
run (:func:`design_record`) and a resumed run follows the recorded order
(:func:`planned`), one lab a visit of a scenario (:func:`visits`)."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from ..core.frames import Mix
from ..methods import registry
from ..store.db import Store
from .model import Campaign, TestSpec


@dataclass(frozen=True)
class ScheduledTest:
    """One stored test. Host-stack kinds have no frames (``frame_size``
    0) and a ``variant`` instead: their protocol and message or payload size."""

    test: TestSpec
    mix: Mix
    frame_size: int
    bidirectional: bool
    repetition: int
    variant: tuple[tuple[str, object], ...] = ()
    #: The campaign scenario ("" for a campaign without [[scenario]]).
    scenario: str = ""

    @property
    def key(self) -> str:
        d = "bi" if self.bidirectional else "uni"
        var = "".join(f":{k}={v}" for k, v in self.variant)
        where = f"{self.scenario}/" if self.scenario else ""
        return f"{where}{self.test.index}:{self.test.kind}:{self.mix}:{self.frame_size}:{d}:{self.repetition}{var}"

    def describe(self) -> str:
        rep = f" #{self.repetition}" if self.test.matrix.blocks > 1 else ""
        where = f"[{self.scenario}] " if self.scenario else ""
        if self.variant:
            version = 4 if self.mix.ipv4_pct else 6
            return f"{where}{self.test.kind} IPv{version} " + " ".join(f"{v}" for _, v in self.variant) + rep
        d = "bidirectional" if self.bidirectional else "unidirectional"
        return f"{where}{self.test.kind} {self.mix} {self.frame_size} B {d}{rep}"


def expand(c: Campaign) -> list[ScheduledTest]:
    """Every point, scenario by scenario, in file order within each."""
    out = []
    for sc in c.scenarios:
        for t in c.tests:
            if t.index not in sc.tests:
                continue
            k = registry.kind(t.kind)
            reps = range(1, c.design.blocks(t.matrix.blocks) + 1)
            if not k.sends_frames:  # a host-stack test: its variants instead of frame sizes and directions
                out += [ScheduledTest(t, mix, 0, False, rep, tuple(v.items()), sc.name)
                        for mix in t.matrix.mixes for v in k.variants(t.params) for rep in reps]
            else:
                out += [ScheduledTest(t, mix, fs, d == "bi", rep, (), sc.name)
                        for d in t.matrix.directions for mix in t.matrix.mixes for fs in t.matrix.frame_sizes for rep in reps]
    return out


def _stage(p: ScheduledTest) -> int:
    """0 for the tests others start from (throughput), 1 for the rest."""
    k = registry.kind(p.test.kind)
    return 1 if k.sends_frames and k.needs_throughput(p.test.params) else 0


def schedule(c: Campaign, seed: int) -> list[ScheduledTest]:
    """The run order. ``randomized``: one block per repetition number, in
    order; each block visits its scenarios in a random order (one lab
    build per scenario and block) and runs each scenario's points in a
    random order, those that start from a throughput after the searches
    they may reuse. ``file``: :func:`expand`'s order. Deterministic given
    ``seed``."""
    points = expand(c)
    if c.design.order == "file":
        return points
    rng = random.Random(seed)
    out: list[ScheduledTest] = []
    for block in sorted({p.repetition for p in points}):
        here = [p for p in points if p.repetition == block]
        scenarios = list(dict.fromkeys(p.scenario for p in here))
        rng.shuffle(scenarios)
        for sc in scenarios:
            for stage in (0, 1):
                batch = [p for p in here if p.scenario == sc and _stage(p) == stage]
                rng.shuffle(batch)
                out += batch
    return out


def design_record(c: Campaign, seed: int, plan: list[ScheduledTest]) -> dict[str, Any]:
    """What the run stores of its design: order, seed, blocks and the point keys in run order."""
    return {"order": c.design.order, "seed": seed, "blocks": len({p.repetition for p in plan}),
            "schedule": [p.key for p in plan]}


def planned(c: Campaign, store: Store, run_id: int) -> list[ScheduledTest]:
    """The run's recorded order (points the record lacks after, in file
    order); a run recorded without a design: file order."""
    points = expand(c)
    recorded = (store.run(run_id)["environment"].get("design") or {}).get("schedule")
    if not recorded:
        return points
    by_key = {p.key: p for p in points}
    first = [by_key[k] for k in recorded if k in by_key]
    return first + [p for p in points if p.key not in set(recorded)]


def visits(plan: list[ScheduledTest], done: set[str]) -> list[tuple[str, list[ScheduledTest]]]:
    """The points still to run, in order, cut where the scenario changes
    and, in a campaign of several scenarios, where the repetition block
    changes: each visit is one lab build. Scenarios are compared build by
    build (report/builds.py), so each block builds each scenario's lab
    anew, even where one block ends with the scenario the next begins with."""
    several = len({p.scenario for p in plan}) > 1
    out: list[tuple[str, list[ScheduledTest]]] = []
    for p in plan:
        if p.key in done:
            continue
        last = out[-1][1][-1] if out else None
        if last is not None and last.scenario == p.scenario and not (several and last.repetition != p.repetition):
            out[-1][1].append(p)
        else:
            out.append((p.scenario, [p]))
    return out


def resuming(run_id: int, plan: list[ScheduledTest], done: set[str]) -> str:
    return f"resuming run {run_id}: {len(done & {p.key for p in plan})} of {len(plan)} tests already done"
