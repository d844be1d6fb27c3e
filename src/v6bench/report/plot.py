"""Figures as files for papers: SVG and PNG drawn by matplotlib from the
same :class:`~.model.Figure` the HTML page draws (same series, styles,
axes and labels). SVG files carry no date or random ids, so the same
results give the same file."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from .model import Figure  # noqa: E402

matplotlib.rcParams["svg.hashsalt"] = "v6bench"
PNG_DPI = 150


def save(f: Figure, stem: Path) -> list[Path]:
    """Writes ``stem``.svg and ``stem``.png; returns their paths."""
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
        out = [stem.with_suffix(".svg"), stem.with_suffix(".png")]
        fig.savefig(out[0], format="svg", metadata={"Date": None})
        fig.savefig(out[1], format="png", dpi=PNG_DPI)
        return out
    finally:
        plt.close(fig)
