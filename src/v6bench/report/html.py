"""The report as one self-contained HTML page: styles, scripts and the
figures' data inlined, nothing fetched (it opens offline, from a file or a
mail attachment). Charts are drawn by ``assets/report.js`` from the same
:class:`~.model.Figure` objects the PNG/SVG files are drawn from; tables are
plain HTML (click a heading to sort).

JavaScript errors, should there be any, are caught by the first script of
the page and written into the page (``#report-errors``), and
``report.js`` marks ``<body data-charts-drawn="N">`` when it has drawn
every chart: the headless-browser test reads both.
"""

from __future__ import annotations

import json
from html import escape
from importlib import resources

from .model import Figure, Forest, Section, Table
from .plot import forest_svg

ERROR_CATCHER = """window.addEventListener("error", function (e) {
  var p = document.getElementById("report-errors");
  if (p) { p.textContent += "JavaScript error: " + e.message + "\\n"; }
});"""


def cell(v) -> tuple[str, str]:
    """(text, CSS class) of a table cell."""
    if v is None:
        return "", "num"
    if isinstance(v, bool):
        return ("yes" if v else "no"), ""
    if isinstance(v, int):
        return (f"{v:,}" if abs(v) >= 10_000 else str(v)), "num"
    if isinstance(v, float):
        a = abs(v)
        if a >= 1e4:
            return f"{v:,.0f}", "num"
        if a >= 100:
            return f"{v:.1f}", "num"
        if a >= 1:
            return f"{v:.2f}", "num"
        return ("0" if v == 0 else f"{v:.3g}"), "num"
    text = str(v)
    if "\n" in text or len(text) > 160:
        return text, "pre"
    if "within noise" in text or text.startswith("no difference"):
        return text, "verdict-noise"
    if "significant" in text and "no significant" not in text:
        return text, "verdict-sig"
    return text, ""


def _table(t: Table) -> str:
    head = "".join(f"<th>{escape(c)}</th>" for c in t.columns)
    body = []
    for row in t.rows:
        cells = []
        for v in row:
            text, cls = cell(v)
            sort = "" if not isinstance(v, (int, float)) or isinstance(v, bool) else f' data-v="{v!r}"'
            cells.append(f'<td class="{cls}"{sort}>{escape(text)}</td>')
        body.append("<tr>" + "".join(cells) + "</tr>")
    note = f'<p class="note">{escape(t.note)}</p>' if t.note else ""
    return (f'<h3 id="tab-{escape(t.id)}">{escape(t.title)}</h3>{note}<div class="tablewrap"><table class="data">'
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"
            f'<p class="note">CSV: tables/{escape(t.id)}.csv</p>')


def _figure(f: Figure) -> str:
    note = f'<p class="note">{escape(f.note)}</p>' if f.note else ""
    return (f'<div class="figure" id="fig-{escape(f.id)}"><h3>{escape(f.title)}</h3>{note}'
            f'<div class="chart" data-fig="{escape(f.id)}"></div>'
            f'<p class="note">Files: figures/{escape(f.id)}.svg, .png; data figures/{escape(f.id)}.csv</p></div>')


def _forest(f: Forest) -> str:
    """A forest plot: the SVG drawn as for the files, inlined (it needs no script)."""
    note = f'<p class="note">{escape(f.note)}</p>' if f.note else ""
    return (f'<div class="figure" id="fig-{escape(f.id)}"><h3>{escape(f.title)}</h3>{note}'
            f'<div class="forest">{forest_svg(f)}</div>'
            f'<p class="note">Files: figures/{escape(f.id)}.svg, .png; data figures/{escape(f.id)}.csv</p></div>')


def _block(b: Figure | Table | Forest) -> str:
    return _figure(b) if isinstance(b, Figure) else _forest(b) if isinstance(b, Forest) else _table(b)


def page(title: str, subtitle: str, sections: list[Section]) -> str:
    css = resources.files(__package__).joinpath("assets/report.css").read_text()
    js = resources.files(__package__).joinpath("assets/report.js").read_text()
    figures = {f.id: f.to_json() for s in sections for f in s.figures}
    data = json.dumps(figures, separators=(",", ":"), allow_nan=False).replace("</", "<\\/")
    nav = "".join(f'<a href="#{escape(s.id)}">{escape(s.title)}</a>' for s in sections)
    body = []
    for s in sections:
        intro = f'<p class="note">{escape(s.intro)}</p>' if s.intro else ""
        blocks = "".join(_block(b) for b in s.blocks)
        body.append(f'<section id="{escape(s.id)}"><h2>{escape(s.title)}</h2>{intro}{blocks}</section>')
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{escape(title)}</title>"
        f"<script>{ERROR_CATCHER}</script><style>{css}</style></head><body>"
        f"<header><h1>{escape(title)}</h1><p>{escape(subtitle)}</p></header><nav>{nav}</nav><main>"
        f"<pre id=\"report-errors\"></pre>{''.join(body)}</main>"
        f"<script type=\"application/json\" id=\"report-data\">{data}</script><script>{js}</script></body></html>\n")
