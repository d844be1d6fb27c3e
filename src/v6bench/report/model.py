"""What a report is made of, independent of how it is drawn: sections of
figures and tables. Views (:mod:`.views`) build them from stored results;
the HTML page (:mod:`.html`), the figure files (:mod:`.plot`) and the CSV
files (:mod:`.build`) draw the same objects, so every format shows the same
numbers.

Every axis label carries its unit; a value that was not measured is None
(drawn as a gap, written as an empty CSV cell), never a made-up number.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

#: How a series is drawn: a measured line with markers, a reference (theory,
#: dashed, no markers), bars (categorical x) or a histogram (bin centres).
STYLES = ("line", "reference", "bar", "hist")


def _finite(v: float | None) -> float | None:
    return v if v is None or math.isfinite(v) else None


@dataclass(frozen=True)
class Series:
    name: str
    x: tuple[float, ...]
    y: tuple[float | None, ...]
    style: str = "line"

    def __post_init__(self) -> None:
        if self.style not in STYLES:
            raise ValueError(f"series style {self.style!r} is not one of {STYLES}")
        if len(self.x) != len(self.y):
            raise ValueError(f"series {self.name!r}: {len(self.x)} x values but {len(self.y)} y values")


@dataclass(frozen=True)
class Figure:
    """One chart. ``x_categories`` names the x positions 0, 1, … of a
    categorical axis (bars); otherwise x is numeric."""

    id: str
    title: str
    x_label: str
    y_label: str
    series: tuple[Series, ...]
    x_log: bool = False
    y_log: bool = False
    x_categories: tuple[str, ...] = ()
    note: str = ""

    def to_json(self) -> dict:
        return {"id": self.id, "title": self.title, "x_label": self.x_label, "y_label": self.y_label, "x_log": self.x_log,
                "y_log": self.y_log, "x_categories": list(self.x_categories), "note": self.note,
                "series": [{"name": s.name, "x": [_finite(v) for v in s.x], "y": [_finite(v) for v in s.y], "style": s.style}
                           for s in self.series]}


@dataclass(frozen=True)
class Table:
    """Cells are str, int, float or None; ``columns`` carry units."""

    id: str
    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple, ...]
    note: str = ""

    def __post_init__(self) -> None:
        for r in self.rows:
            if len(r) != len(self.columns):
                raise ValueError(f"table {self.id}: a row has {len(r)} cells for {len(self.columns)} columns")


@dataclass(frozen=True)
class Interval:
    """One comparison on a forest plot: its effect [% of A] and 95 % interval
    (None where there is none: too few repetitions), the difference it could
    have detected (±, %), its design (paired, unpaired, mix regression) and
    its outcome (:data:`.stats.OUTCOMES`)."""

    label: str
    effect_pct: float | None
    low_pct: float | None
    high_pct: float | None
    detectable_pct: float | None
    design: str
    outcome: str


#: The designs of a forest's pooled rows, drawn as diamonds spanning their interval: the
#: pooled effect over every run, and one machine's runs pooled alone.
POOLED, MACHINE_POOLED = "pooled", "machine pooled"

#: A forest's columns (its CSV).
FOREST_COLUMNS = ("comparison", "design", "B − A %", "95 % CI low %", "95 % CI high %", "detectable ± %", "outcome")


@dataclass(frozen=True)
class Forest:
    """Every comparison as an effect with its interval on one axis, the band
    it could have detected around 0, and its design marked (a forest plot:
    rows in the order given)."""

    id: str
    title: str
    x_label: str
    rows: tuple[Interval, ...]
    note: str = ""

    def table_rows(self) -> list[tuple]:
        return [(r.label, r.design, r.effect_pct, r.low_pct, r.high_pct, r.detectable_pct, r.outcome) for r in self.rows]


@dataclass(frozen=True)
class Section:
    id: str
    title: str
    intro: str
    blocks: tuple[Figure | Table | Forest, ...] = field(default=())

    @property
    def figures(self) -> list[Figure]:
        return [b for b in self.blocks if isinstance(b, Figure)]

    @property
    def forests(self) -> list[Forest]:
        return [b for b in self.blocks if isinstance(b, Forest)]

    @property
    def tables(self) -> list[Table]:
        return [b for b in self.blocks if isinstance(b, Table)]
