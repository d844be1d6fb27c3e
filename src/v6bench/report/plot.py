"""Figures as files for papers: SVG and PNG drawn by matplotlib from the
same :class:`~.model.Figure` the HTML page draws (same series, styles,
axes and labels). SVG files carry no date or random ids, so the same
results give the same file. A :class:`~.model.Forest` (every comparison's
effect and interval) is drawn here for every format, the HTML page
inlining the same SVG (:func:`forest_svg`)."""

from __future__ import annotations

import io
import re
from pathlib import Path

import matplotlib
import matplotlib.ticker

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch, Polygon  # noqa: E402

from .model import MACHINE_POOLED, POOLED, Figure, Forest  # noqa: E402

matplotlib.rcParams["svg.hashsalt"] = "v6bench"
PNG_DPI = 150
#: How a forest plot marks each design (matplotlib marker, filled) and each outcome (colour).
DESIGN_MARKERS = {"paired": ("o", True), "unpaired": ("s", False), "mix regression": ("D", True)}
#: A pooled row's diamond: half its height [rows] and whether filled (model.POOLED, MACHINE_POOLED).
DIAMONDS = {POOLED: (0.34, True), MACHINE_POOLED: (0.22, False)}
OUTCOME_COLORS = {"differs": "#c0392b", "none": "#2c6fbb", "few": "#9aa5b1", "line": "#9aa5b1", "other": "#9aa5b1"}
#: A forest's axis reaches at most this far [%]; an interval beyond it ends at the edge with an arrowhead.
FOREST_LIMIT_PCT = 100.0
#: Its axis is linear within ± this [%] and logarithmic beyond, so that 0.2 % and 40 % both show.
FOREST_LINEAR_PCT = 1.0
#: Longest row label on a forest plot [characters].
FOREST_LABEL_CHARS = 72


def save(f: Figure | Forest, stem: Path) -> list[Path]:
    """Writes ``stem``.svg and ``stem``.png; returns their paths."""
    if isinstance(f, Forest):
        fig = _forest(f)
        try:
            return _files(fig, stem)
        finally:
            plt.close(fig)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    try:
        bars = [s for s in f.series if s.style == "bar"]
        width = 0.8 / max(1, len(bars))
        for i, s in enumerate(f.series):
            pts = [(x, y) for x, y in zip(s.x, s.y) if y is not None]
            color = f"C{i % 10}"
            if s.style == "bar":
                k = bars.index(s)
                ax.bar([x - 0.4 + width * (k + 0.5) for x, _ in pts], [y for _, y in pts], width * 0.92, label=s.name, color=color)
            elif s.style == "hist":
                ax.step([x for x, _ in pts], [y for _, y in pts], where="mid", label=s.name, color=color)
            elif s.style == "reference":
                ax.plot([x for x, _ in pts], [y for _, y in pts], "--", label=s.name, color=color, linewidth=1.2)
            else:
                ax.plot([x for x, _ in pts], [y for _, y in pts], "o-", label=s.name, color=color, markersize=3.5)
        if f.x_categories:
            ax.set_xticks(range(len(f.x_categories)), f.x_categories)
        if f.x_log and not f.x_categories:
            ax.set_xscale("log")
        if f.y_log:
            ax.set_yscale("log")
        elif any(s.style in ("bar", "hist") for s in f.series):
            ax.set_ylim(bottom=0)
        ax.set_xlabel(f.x_label)
        ax.set_ylabel(f.y_label)
        ax.set_title(f.title, fontsize=11)
        ax.grid(True, color="#e4e7eb")
        if f.series:
            ax.legend(fontsize=7, loc="best")
        fig.tight_layout()
        return _files(fig, stem)
    finally:
        plt.close(fig)


def _files(fig, stem: Path) -> list[Path]:
    out = [stem.with_suffix(".svg"), stem.with_suffix(".png")]
    fig.savefig(out[0], format="svg", metadata={"Date": None})
    fig.savefig(out[1], format="png", dpi=PNG_DPI)
    return out


def forest_svg(f: Forest) -> str:
    """The forest plot as an ``<svg>`` element, for inlining in HTML."""
    fig = _forest(f)
    try:
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None})
    finally:
        plt.close(fig)
    text = buf.getvalue()
    text = text[text.index("<svg"):]
    # Inline: without matplotlib's RDF metadata (its namespace URLs), as wide as the page allows.
    text = re.sub(r"\s*<metadata>.*?</metadata>", "", text, count=1, flags=re.S)
    return re.sub(r'<svg ([^>]*?)width="[^"]*" height="[^"]*"', r'<svg \1width="100%"', text, count=1)


def _past_the_axis(ax, r, y: float, lim: float, color: str) -> None:
    """An arrowhead at the axis's end where the interval runs past it."""
    if r.low_pct < -lim:
        ax.plot(-lim, y, marker="<", color=color, markersize=5, zorder=5)
    if r.high_pct > lim:
        ax.plot(lim, y, marker=">", color=color, markersize=5, zorder=5)


def _diamond(ax, r, y: float, lim: float, color: str) -> None:
    """A pooled row: a diamond from its interval's low end to its high end, widest at the estimate."""
    lo, hi, mid = max(r.low_pct, -lim), min(r.high_pct, lim), max(-lim, min(lim, r.effect_pct))
    half, filled = DIAMONDS[r.design]
    ax.add_patch(Polygon([(lo, y), (mid, y + half), (hi, y), (mid, y - half)], closed=True, zorder=4,
                         edgecolor=color, facecolor=color if filled else "white", linewidth=1.4))
    _past_the_axis(ax, r, y, lim, color)


def _forest(f: Forest):
    """Rows top to bottom: each comparison's interval (a line; an
    arrowhead where it runs past the axis), its effect (a marker whose
    shape is the design: filled circle paired, open square unpaired,
    diamond mix regression; colour the outcome) and the band ±detectable
    it could have detected, shaded around 0; a pooled row (:data:`DIAMONDS`)
    is a diamond spanning its interval, the classic forest's. The axis is linear within
    ±:data:`FOREST_LINEAR_PCT` and logarithmic beyond."""
    n = len(f.rows)
    height_in = 1.7 + 0.26 * max(n, 1)
    fig, ax = plt.subplots(figsize=(12, height_in))
    ends = [abs(v) for r in f.rows for v in (r.effect_pct, r.low_pct, r.high_pct, r.detectable_pct) if v is not None]
    lim = min(FOREST_LIMIT_PCT, max(ends + [FOREST_LINEAR_PCT]) * 1.2)
    for i, r in enumerate(f.rows):
        y = n - 1 - i
        color = OUTCOME_COLORS.get(r.outcome, OUTCOME_COLORS["other"])
        if r.detectable_pct is not None:
            d = min(r.detectable_pct, lim)
            ax.barh(y, 2 * d, left=-d, height=0.6, color="#e4e7eb", zorder=1)
        if r.design in DIAMONDS and None not in (r.effect_pct, r.low_pct, r.high_pct):
            _diamond(ax, r, y, lim, color)
            continue
        if r.low_pct is not None and r.high_pct is not None:
            ax.plot([max(r.low_pct, -lim), min(r.high_pct, lim)], [y, y], color=color, linewidth=1.6, zorder=2)
            _past_the_axis(ax, r, y, lim, color)
        if r.effect_pct is not None:
            marker, filled = DESIGN_MARKERS.get(r.design, ("o", True))
            ax.plot(max(-lim, min(lim, r.effect_pct)), y, marker=marker, markersize=6, color=color,
                    markerfacecolor=color if filled else "white", zorder=4)
    ax.axvline(0, color="#333", linewidth=0.8)
    labels = [r.label if len(r.label) <= FOREST_LABEL_CHARS else r.label[:FOREST_LABEL_CHARS - 1] + "…"
              for r in reversed(f.rows)]
    ax.set_yticks(range(n), labels, fontsize=7)
    ax.set_xscale("symlog", linthresh=FOREST_LINEAR_PCT)
    ax.set_xlim(-lim, lim)
    ticks = [t for t in (-100, -30, -10, -3, -1, 0, 1, 3, 10, 30, 100) if abs(t) <= lim]
    ax.set_xticks(ticks, [f"{t:+g}" if t else "0" for t in ticks])
    ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    ax.set_ylim(-0.7, max(n, 1) - 0.3)
    ax.set_xlabel(f.x_label)
    ax.set_title(f.title, fontsize=11)
    ax.grid(True, axis="x", color="#e4e7eb")
    handles = [Line2D([], [], linestyle="", marker=m, color="#555", markerfacecolor="#555" if filled else "white",
                      label=design) for design, (m, filled) in DESIGN_MARKERS.items()]
    handles += [Line2D([], [], color=OUTCOME_COLORS[o], label=name)
                for o, name in (("differs", "differs"), ("none", "no difference detected"), ("few", "too few"))]
    handles += [Patch(edgecolor="#555", facecolor="#555" if filled else "white", label=design + " (its interval)")
                for design, (_, filled) in DIAMONDS.items() if any(r.design == design for r in f.rows)]
    handles.append(Patch(color="#e4e7eb", label="could have been detected (±)"))
    fig.legend(handles=handles, fontsize=7, loc="lower center", ncol=4, frameon=False)
    # Room for labels of FOREST_LABEL_CHARS at 7 pt on the left, the title above, the axis label and legend below.
    fig.subplots_adjust(left=0.38, right=0.98, top=1 - 0.35 / height_in, bottom=0.95 / height_in)
    return fig
