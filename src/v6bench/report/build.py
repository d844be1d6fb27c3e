"""``v6bench report``: writes one run's report into a directory:

- ``report.html``: the whole report, self-contained (:mod:`.html`);
- ``figures/ID.svg``, ``figures/ID.png``: every figure (:mod:`.plot`), and
  ``figures/ID.csv``: the figure's data (series, x, y);
- ``tables/ID.csv``: every table, full precision, units in the headings.
"""

from __future__ import annotations

import csv
from pathlib import Path

from ..core import machine
from ..store.db import Store
from . import data as run_data
from . import html, plot
from .model import FOREST_COLUMNS, Section
from .views import sections as build_sections


def default_dir(store: Store, run_id: int) -> Path:
    """``reports/run-N`` beside an SQLite store (``results/reports/run-N`` for a server's)."""
    return store.reports_dir / f"run-{run_id}"


def _csv(path: Path, header: tuple, rows) -> None:
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(["" if v is None else v for v in r] for r in rows)


def write(store: Store, run_id: int, out: Path, figures: bool = True) -> dict:
    """Writes the report; returns {"html": path, "figures": n, "tables": n, "sections": [ids]}.
    ``figures=False`` skips the SVG/PNG files (they take most of the time)."""
    d = run_data.load(store, run_id)
    run = d.run
    env = run["environment"]
    where = ("scenarios " + ", ".join(env["scenarios"])) if env.get("scenarios") else (env.get("dut") or {}).get("description", "?")
    subtitle = (f"{run['status']}; {len(d.tests)} tests; {where}; machine {machine.label(env)}; kernel {env.get('kernel')}; "
                f"engine {(env.get('engine') or {}).get('engine_version')}; tester and DUT on one machine")
    return write_sections(build_sections(d), out, f"v6bench report: run {run['id']}, {run['name']}", subtitle, figures)


def write_sections(secs: list[Section], out: Path, title: str, subtitle: str, figures: bool = True) -> dict:
    """Writes sections as a report into ``out`` (module docstring): the page, figure and table files."""
    (out / "figures").mkdir(parents=True, exist_ok=True)
    (out / "tables").mkdir(parents=True, exist_ok=True)
    n_fig = n_tab = 0
    for s in secs:
        for f in s.figures:
            _csv(out / "figures" / f"{f.id}.csv", ("series", f.x_label, f.y_label),
                 [(se.name, f.x_categories[int(x)] if f.x_categories else x, y) for se in f.series for x, y in zip(se.x, se.y)])
            if figures:
                plot.save(f, out / "figures" / f.id)
            n_fig += 1
        for fo in s.forests:
            _csv(out / "figures" / f"{fo.id}.csv", FOREST_COLUMNS, fo.table_rows())
            if figures:
                plot.save(fo, out / "figures" / fo.id)
            n_fig += 1
        for t in s.tables:
            _csv(out / "tables" / f"{t.id}.csv", t.columns, t.rows)
            n_tab += 1
    page = out / "report.html"
    page.write_text(html.page(title, subtitle, secs))
    return {"html": page, "figures": n_fig, "tables": n_tab, "sections": [s.id for s in secs]}
