"""Rendering a report (or its JSON document) as one self-contained HTML page (:func:`to_html`).

The tables are those of the Markdown, the figures those of ``--plots``; nothing is computed
here. docs/reports.md describes the page and its layout on each screen.
"""

from __future__ import annotations

import base64
import html
import re
import struct
from collections.abc import Sequence
from typing import Any

from saber.reports.comparisons import comparison_blocks, comparison_notes
from saber.reports.model import Report, ReportLike, as_report
from saber.reports.tables import (
    SOURCES_TITLE,
    Table,
    group_title,
    intro,
    notes,
    per_game_tables,
    source_lines,
    summary_tables,
    time_limit_groups,
    top_lines,
)

FIGURE_DPI = 200  # sharp on a phone's screen at the figure's shown width
SHOWN_PX_PER_INCH = 144  # figures are shown 1.5x their print size (96 px an inch)

# The caption of each figure, by the start of its name (see saber.reports.plots).
FIGURE_TITLES = {
    "aggregates": "Median, IQM, mean and optimality gap with their intervals",
    "classes": "Games per SABER class",
    "per_game": "World-record-normalized score of each game",
    "profile": "Score distribution (fraction of (run, game) entries above τ)",
    "improvement": "Probability of improvement P(X > Y)",
    "time_limits": "Median and mean at each time limit",
}

# The page's style sheet: the layout that never overflows a phone or a laptop (the module
# docstring); the SABER board (saber.board) builds its pages on it too.
PAGE_STYLE = """
:root { color-scheme: light; --ink: #1a1a1a; --muted: #5a5a5a; --rule: #d0d0d0;
  --band: #f4f4f4; --warn: #fff4e5; --warn-rule: #e0a040; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--ink); background: #ffffff;
  font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial,
  sans-serif; }
main { max-width: 76rem; margin: 0 auto; padding: 1rem; }
h1 { font-size: 1.6rem; margin: 0.5rem 0 0.25rem; }
h2 { font-size: 1.3rem; margin: 2rem 0 0.5rem; border-bottom: 1px solid var(--rule); }
h3 { font-size: 1.05rem; margin: 1.25rem 0 0.5rem; }
p, li { max-width: 48rem; }
.meta { color: var(--muted); font-size: 0.9rem; overflow-wrap: anywhere; }
.warning { background: var(--warn); border-left: 4px solid var(--warn-rule);
  padding: 0.5rem 0.75rem; max-width: 48rem; }
.scroll { overflow-x: auto; margin: 0.5rem 0 1rem; border: 1px solid var(--rule);
  width: fit-content; max-width: 100%; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; font-size: 0.9rem; }
th, td { padding: 0.3rem 0.6rem; border-bottom: 1px solid var(--rule); }
.nb { white-space: nowrap; }
.h { display: inline-block; width: min-content; min-width: 100%; }
thead th { background: var(--band); border-bottom: 2px solid var(--ink); vertical-align: bottom;
  white-space: normal; }
td.r, th.r { text-align: right; }
td.l, th.l { text-align: left; }
tbody tr:nth-child(even) td { background: #fafafa; }
th:first-child, td:first-child { position: sticky; left: 0; background: #ffffff;
  border-right: 1px solid var(--rule); }
thead th:first-child { background: var(--band); }
.notes li, .comparisons li { margin: 0.3rem 0; }
.figures { display: grid; gap: 1rem;
  grid-template-columns: repeat(auto-fill, minmax(min(100%, 30rem), 1fr)); }
figure { margin: 0; }
figure.wide { grid-column: 1 / -1; }
figure img { display: block; max-width: 100%; height: auto; }
figcaption { color: var(--muted); font-size: 0.85rem; margin-top: 0.25rem; }
@media (max-width: 80rem) {  /* a small laptop: tighter tables before any scrolling */
  table { font-size: 0.82rem; }
  th, td { padding: 0.25rem 0.4rem; }
}
@media (max-width: 64rem) {
  body { font-size: 15px; }
  main { padding: 0.6rem; }
  /* Stacked tables: one box per row, each cell under its column's name (data-label). */
  .scroll { border: 0; width: auto; }
  .scroll table, .scroll tbody, .scroll tr, .scroll th, .scroll td { display: block; }
  .scroll table { width: 100%; }
  .scroll thead { position: absolute; width: 1px; height: 1px; overflow: hidden;
    clip-path: inset(50%); }
  .scroll tr { border: 1px solid var(--rule); margin: 0 0 0.6rem; }
  .scroll tbody th { position: static; background: var(--band); border-right: 0;
    font-weight: 600; }
  .scroll td { display: flex; justify-content: space-between; gap: 0.75rem;
    padding: 0.2rem 0.5rem; border-bottom: 1px solid #ececec; text-align: right; }
  .scroll td::before { content: attr(data-label); text-align: left; color: var(--muted); }
  .scroll td:first-child { position: static; border-right: 0; }
  tbody tr:nth-child(even) td { background: #ffffff; }
}
"""


def _e(text: str) -> str:
    return html.escape(text, quote=True)


def _without_limit_column(table: Table) -> Table:
    """The table without its "Time limit" column (a report of one group names it above)."""
    if "Time limit" not in table.header:
        return table
    i = table.header.index("Time limit")

    def drop(cells: list[str]) -> list[str]:
        return cells[:i] + cells[i + 1 :]

    align = table.align[:i] + table.align[i + 1 :]
    return Table(drop(table.header), [drop(row) for row in table.rows], align)


# An interval or a share after a value: "19.5% [18.0%, 20.7%]", "98.7 (98.7%)"; not the
# words of a name ("SABER (unlimited)").
_INTERVAL = re.compile(r" (\[[^\]]*\]|\([-−+]?[0-9][^)]*\))")


def _cell(text: str) -> str:
    """A cell's text as HTML that may break only before an interval or a share in
    brackets (``19.5%`` over ``[18.0%, 20.7%]``, ``98.7`` over ``(98.7%)``) and after the
    ``@`` of an agent's name (``rainbow-iqn@`` over ``saber-paper``); never inside a
    number, an interval, a phrase (``SABER (unlimited)``), or between a value and its mark
    (``19.9% †``). A cell breaks only when its table is too wide for the page: a header
    (``.h``) asks for no more width than its longest word, and wraps first."""
    pieces = []
    for i, part in enumerate(_INTERVAL.split(text)):  # value, interval, rest, ...
        if i % 2:  # an interval, after the space the split took
            pieces.append(f' <span class="nb">{_e(part)}</span>')
        elif part:
            words = re.split("(?<=@)", part)  # "rainbow-iqn@", "saber-paper"
            pieces.append("<wbr>".join(f'<span class="nb">{_e(w)}</span>' for w in words if w))
    return "".join(pieces)


def _table(table: Table, caption: str | None = None) -> str:
    head = "".join(
        f'<th class="{a}" scope="col"><span class="h">{_e(h).replace("@", "@<wbr>")}</span></th>'
        for h, a in zip(table.header, table.align, strict=True)
    )
    body = "".join(
        "<tr>"
        + "".join(
            f'<th class="l" scope="row">{_cell(cell)}</th>'
            if i == 0
            else f'<td class="{a}" data-label="{_e(label)}"><span>{_cell(cell)}</span></td>'
            for i, (cell, a, label) in enumerate(zip(row, table.align, table.header, strict=True))
        )
        + "</tr>"
        for row in table.rows
    )
    caption_html = f"<caption hidden>{_e(caption)}</caption>" if caption else ""
    return (
        f'<div class="scroll"><table>{caption_html}<thead><tr>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table></div>"
    )


def _list(items: list[str], css: str) -> str:
    return f'<ul class="{css}">' + "".join(f"<li>{_e(item)}</li>" for item in items) + "</ul>"


def _png_size(png: bytes) -> tuple[int, int]:
    """Width and height in pixels, from the PNG's IHDR chunk."""
    return struct.unpack(">II", png[16:24])


def _figures(report: Report, dpi: int, limits: Sequence[str] | None = None) -> list[str]:
    """The figures section: per group of identical time limits (those holding one of
    ``limits``; None: every group), every figure it can fill."""
    from saber.reports.figures.files import figure_bytes
    from saber.reports.figures.style import PAGE_WIDTH
    from saber.reports.plots import report_figures

    groups = time_limit_groups(report)
    parts = []
    for group in groups:
        if limits is not None and not set(group) & set(limits):
            continue
        # The group's last limit names the figures: the unlimited one when it is there.
        drawn = report_figures(report, [group[-1]], across_limits=False)
        parts.append(f"<h3>{_e(group_title(group))}</h3>")
        parts.append(_figure_grid(drawn, dpi, PAGE_WIDTH, figure_bytes))
    if len(groups) > 1:
        across = report_figures(report, [], across_limits=True)
        if across:
            parts.append("<h3>Across time limits</h3>")
            parts.append(_figure_grid(across, dpi, PAGE_WIDTH, figure_bytes))
    return parts


def _figure_grid(drawn: dict[str, Any], dpi: int, page_width: float, to_bytes: Any) -> str:
    items = []
    for name, fig in drawn.items():
        png = to_bytes(fig, "png", dpi)
        width, height = _png_size(png)
        shown_w = round(width / dpi * SHOWN_PX_PER_INCH)
        shown_h = round(height / dpi * SHOWN_PX_PER_INCH)
        title = next((t for key, t in FIGURE_TITLES.items() if name.startswith(key)), name)
        wide = ' class="wide"' if fig.get_figwidth() >= page_width - 0.01 else ""
        data = base64.b64encode(png).decode("ascii")
        items.append(
            f'<figure{wide} id="figure-{_e(name)}"><img src="data:image/png;base64,{data}" '
            f'width="{shown_w}" height="{shown_h}" alt="{_e(title)}">'
            f"<figcaption>{_e(title)} ({_e(name)})</figcaption></figure>"
        )
    return '<div class="figures">' + "".join(items) + "</div>"


def to_html(
    report: ReportLike,
    figures: bool = True,
    dpi: int = FIGURE_DPI,
    limits: Sequence[str] | None = None,
) -> str:
    """The report as one self-contained HTML page.

    Args:
        report: from :func:`saber.reports.make_report`, or its JSON document
            (``make_report(...).to_dict()``, a ``report.json`` read back).
        figures: draw the figures (needs matplotlib); False leaves the section out.
        dpi: resolution of the inlined PNG figures.
        limits: draw the figures of these time limits only (``("saber",)``), and the one
            across limits; None: of every limit. The tables show every limit.

    Raises:
        PlotsUnavailableError: ``figures`` without matplotlib installed.
    """
    report = as_report(report)
    warning, warnings, sources = top_lines(report)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>SABER report</title>",
        f"<style>{PAGE_STYLE}</style></head><body><main>",
        "<h1>SABER report</h1>",
        f'<p class="meta">saber {_e(report.saber_version)} · '
        f"{_e(report.format)} · scores: {_e(', '.join(sources))}</p>",
    ]
    if warning:
        parts.append(f'<p class="warning"><strong>{_e(warning)}</strong></p>')
    if warnings:
        parts.append('<div class="warning">' + _list(warnings, "warnings") + "</div>")
    parts += ['<section id="summary"><h2>Summary</h2>', f"<p>{_e(intro(report))}</p>"]
    captions = ["World-record-normalized aggregates", "Classes and human-normalized scores"]
    tables = summary_tables(report)
    groups = time_limit_groups(report)
    if len(groups) == 1:  # the limit once, above, leaves the numbers room on a phone
        parts.append(f"<p><strong>Time limit: {_e(group_title(groups[0]))}</strong></p>")
        tables = [_without_limit_column(t) for t in tables]
    parts += [_table(t, c) for t, c in zip(tables, captions, strict=True)]
    parts += [_list(notes(report), "notes"), "</section>"]
    blocks = comparison_blocks(report)
    if blocks:
        parts.append('<section id="comparisons"><h2>Comparisons</h2>')
        for block in blocks:
            parts.append(f"<h3>{_e(block.title)}</h3>")
            parts += [_table(m, m.header[0]) for m in (block.improvement, block.welch) if m]
            parts += [f"<p>{_e(line)}</p>" for line in block.lines]
        parts += [_list(comparison_notes(report), "notes"), "</section>"]
    if figures:
        parts += [
            '<section id="figures"><h2>Figures</h2>',
            *_figures(report, dpi, limits),
            "</section>",
        ]
    parts.append('<section id="per-game"><h2>Per-game scores</h2>')
    for title, table in per_game_tables(report):
        parts += [f"<h3>{_e(title)}</h3>", _table(table, title)]
    parts += ["</section>", '<section id="sources"><h2>Sources</h2>']
    parts += [f"<p>{_e(SOURCES_TITLE)}</p>", _list(source_lines(report), "sources"), "</section>"]
    parts.append("</main></body></html>")
    return "\n".join(parts) + "\n"
