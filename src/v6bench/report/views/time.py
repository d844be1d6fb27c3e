"""Where a run's time went (docs/report.md, "Where the time went"): its
wall time by phase as the run recorded it (core/phases.py), as a table and
a bar chart; the rest of the wall time is outside every phase (Python,
the store, the searches' own logic)."""

from __future__ import annotations

from ...core.phases import PHASES
from ..data import RunData
from ..model import Figure, Section, Series, Table


def time_by_phase(data: RunData) -> Section | None:
    spent = (data.run.get("environment") or {}).get("time_s") or {}
    wall = spent.get("wall")
    if not wall:
        return None
    named = [(p, spent[p]) for p in PHASES if spent.get(p)]
    rest = max(0.0, wall - sum(s for _, s in named))
    rows = tuple((p, round(s, 1), round(100 * s / wall, 1)) for p, s in [*named, ("outside every phase", rest)])
    return Section("time", "Where the time went",
                   f"The run's wall time, {wall / 60:.1f} min, by phase (each second counted once, to the innermost "
                   "phase; a resumed run adds each session's).",
                   (Figure("time-by-phase", "Wall time by phase", "phase", "time [s]",
                           (Series("time", tuple(range(len(rows))), tuple(r[1] for r in rows), "bar"),),
                           x_categories=tuple(r[0] for r in rows)),
                    Table("time-by-phase", "Wall time by phase", ("phase", "time [s]", "share of wall time [%]"), rows,
                          "Traffic, learning and settle and drain are the engine's own account of its run; engine "
                          "start and stop is the rest of it. Between trials: the searches' logic, storing, the "
                          "tests' own waits.")))
