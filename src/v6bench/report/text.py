"""Plain-text tables for the terminal."""

from __future__ import annotations

from typing import Sequence


def align(rows: Sequence[Sequence[str]], left_columns: int = 2) -> list[str]:
    """Rows of cells as lines: the first ``left_columns`` columns left-aligned,
    the rest (numbers) right-aligned, two spaces apart, no trailing blanks."""
    widths = [max(len(row[k]) for row in rows) for k in range(len(rows[0]))]
    return [
        "  ".join(c.ljust(w) if k < left_columns else c.rjust(w) for k, (c, w) in enumerate(zip(row, widths))).rstrip()
        for row in rows
    ]
