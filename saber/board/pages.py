"""The board's pages: plain HTML, one style sheet and a few lines of JavaScript, all local.

Every table is a real ``<table>`` with a ``<caption>``, column headers (``scope="col"``)
and row headers (``scope="row"``), so a screen reader reads it as a table; each cell
carries its column's name (``data-label``) for the stacked layout of a phone (the style of
:mod:`saber.reports.html`, whose pages never overflow at 375 and 1366 px) and its value to
sort by (``data-sort``). ``sort.js`` turns each header into a button that sorts by its
column; without JavaScript the tables read in their ranked order. A status is a word and a
symbol, never a colour alone, and the colours are the Okabe-Ito palette, which readers
with every common colour-vision deficiency tell apart. Nothing is fetched from the network:
no font, no script, no style sheet.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from saber.board.entries import (
    CONFLICT,
    FAILED,
    INCOMPLETE,
    NOT_SABER,
    PUBLISHED,
    UNVERIFIED,
    VERIFIED,
    Entry,
)
from saber.reports.html import PAGE_STYLE

STYLE_FILE = "board.css"
SCRIPT_FILE = "sort.js"

_SYMBOLS = {VERIFIED: "✓", PUBLISHED: "◇", NOT_SABER: "△", INCOMPLETE: "◐",
            UNVERIFIED: "…", CONFLICT: "⇄", FAILED: "✗"}  # fmt: skip
_CSS_CLASS = {
    VERIFIED: "verified",
    PUBLISHED: "published",
    NOT_SABER: "not-saber",
    INCOMPLETE: "incomplete",
    UNVERIFIED: "unverified",
    CONFLICT: "conflict",
    FAILED: "failed",
}

STYLE = (
    PAGE_STYLE
    + """
body > header { border-bottom: 1px solid var(--rule); background: var(--band); }
body > header nav { max-width: 76rem; margin: 0 auto; padding: 0.5rem 1rem;
  display: flex; flex-wrap: wrap; gap: 0.25rem 1.25rem; }
nav a, main a { color: #0b57a4; }
nav a[aria-current] { color: var(--ink); font-weight: 600; text-decoration: none; }
footer { max-width: 76rem; margin: 2rem auto 1rem; padding: 0 1rem; color: var(--muted);
  font-size: 0.85rem; }
caption { caption-side: top; text-align: left; font-weight: 600; padding: 0.4rem 0.6rem; }
th button { font: inherit; font-weight: 600; color: inherit; background: none; border: 0;
  padding: 0; cursor: pointer; text-align: inherit; }
th button:focus-visible { outline: 2px solid #0072b2; }
th[aria-sort="ascending"] button::after { content: " ▲"; }
th[aria-sort="descending"] button::after { content: " ▼"; }
.status { border-left: 0.3rem solid; padding-left: 0.35rem; display: inline-block; }
main { max-width: 84rem; }  /* the ranking's 16 columns fit a 1366 px laptop */
body > header nav, footer { max-width: 84rem; }
main table { font-size: 0.82rem; }
tbody th { text-align: left; }
tbody th a { display: inline-block; max-width: 20rem; overflow-wrap: break-word; }  /* long names */
main th, main td { padding: 0.3rem 0.45rem; }
.sets-title { margin-bottom: 0.25rem; }
.s-verified { border-color: #0072b2; }
.s-published { border-color: #56b4e9; }
.s-not-saber { border-color: #e69f00; }
.s-failed { border-color: #d55e00; }
.s-incomplete { border-color: #009e73; }
.s-unverified { border-color: #f0e442; }
.s-conflict { border-color: #cc79a7; }
code, pre { font-size: 0.85rem; overflow-wrap: anywhere; white-space: pre-wrap; }
pre { background: var(--band); padding: 0.5rem 0.75rem; max-width: 48rem; }
dl.facts { display: grid; grid-template-columns: minmax(8rem, max-content) 1fr; gap: 0.2rem 1rem;
  max-width: 60rem; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
.pairs { overflow-x: auto; margin: 0.5rem 0 1rem; border: 1px solid var(--rule);
  width: fit-content; max-width: 100%; }
.pairs td { overflow-wrap: anywhere; }
.sets { display: flex; flex-wrap: wrap; gap: 0.25rem 1rem; padding: 0; list-style: none; }
@media (max-width: 64rem) { .scroll caption { display: block; padding: 0.4rem 0; }
  /* stacked: a long path in a cell wraps rather than widen its box */
  .scroll tbody th, .scroll td > span { min-width: 0; overflow-wrap: anywhere; } }
@media (max-width: 40rem) { dl.facts { grid-template-columns: 1fr; } dl.facts dd { margin-bottom: 0.4rem; } }
"""
)

# Sorts any table.sortable by the column whose header is clicked (again: the other way).
# A cell sorts by its data-sort when it has one (numbers), else by its text; empty last.
SCRIPT = """\
document.querySelectorAll("table.sortable").forEach((table) => {
  const heads = [...table.tHead.rows[0].cells];
  heads.forEach((th, column) => {
    const button = document.createElement("button");
    button.type = "button";
    button.append(...th.childNodes);
    th.append(button);
    button.addEventListener("click", () => {
      const down = th.getAttribute("aria-sort") === "ascending";
      heads.forEach((h) => h.removeAttribute("aria-sort"));
      th.setAttribute("aria-sort", down ? "descending" : "ascending");
      const key = (row) => {
        const cell = row.cells[column];
        const text = cell.dataset.sort ?? cell.textContent.trim();
        return text === "" ? null : isNaN(text) ? text.toLowerCase() : Number(text);
      };
      const rows = [...table.tBodies[0].rows].map((row) => [key(row), row]);
      rows.sort(([a], [b]) => (a === null) - (b === null) || (a === null ? 0 :
        (a < b ? -1 : a > b ? 1 : 0) * (down ? -1 : 1)));
      rows.forEach(([, row]) => table.tBodies[0].append(row));
    });
  });
});
"""


def esc(text: Any) -> str:
    """Text as HTML."""
    return html.escape(str(text), quote=True)


@dataclass(frozen=True)
class Cell:
    """One cell: its text, the value it sorts by (None: its text), a link, or raw HTML."""

    text: str
    sort: float | str | None = None
    href: str | None = None
    markup: str | None = None

    def inner(self) -> str:
        """The cell's HTML content."""
        if self.markup is not None:
            return self.markup
        shown = _breakable(self.text)
        return f'<a href="{esc(self.href)}">{shown}</a>' if self.href else shown


def _breakable(text: str) -> str:
    """Text that may wrap before an interval in brackets (``19.5%`` over ``[18.0%, 20.7%]``),
    never inside it: a table narrows this way before it overflows."""
    value, bracket, rest = text.partition(" [")
    if not bracket:
        return esc(text)
    return f'{esc(value)} <span class="nb">[{esc(rest)}</span>'


def table(
    caption: str,
    header: Sequence[str],
    rows: Sequence[Sequence[Cell]],
    sortable: bool = True,
    stacked: bool = True,
) -> str:
    """A captioned table; the first cell of each row is its row header. ``stacked``: on a
    phone, one box per row (a wide table); else it stays a table (two columns fit)."""
    head = "".join(f'<th scope="col">{esc(h)}</th>' for h in header)
    body = []
    for row in rows:
        cells = []
        for i, (cell, label) in enumerate(zip(row, header, strict=True)):
            sort = "" if cell.sort is None else f' data-sort="{esc(_sort_value(cell.sort))}"'
            if i == 0:
                cells.append(f'<th scope="row"{sort}>{cell.inner()}</th>')
            else:
                cells.append(
                    f'<td data-label="{esc(label)}"{sort}><span>{cell.inner()}</span></td>'
                )
        body.append("<tr>" + "".join(cells) + "</tr>")
    css = ' class="sortable"' if sortable else ""
    return (
        f'<div class="{"scroll" if stacked else "pairs"}"><table{css}><caption>{esc(caption)}</caption>'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"
    )


def _sort_value(value: float | str) -> str:
    if isinstance(value, float) and not math.isfinite(value):
        return "1e308" if value > 0 else "-1e308"
    return str(value)


def status_cell(entry: Entry) -> Cell:
    """The status as a word and a symbol, with its colour as a border."""
    markup = (
        f'<span class="status s-{_CSS_CLASS[entry.status]}">'
        f'<span aria-hidden="true">{_SYMBOLS[entry.status]} </span>{esc(entry.status)}</span>'
    )
    return Cell(entry.status, sort=str(list(_CSS_CLASS).index(entry.status)), markup=markup)


NAV = (
    ("index.html", "Ranking"),
    ("games/index.html", "Games"),
    ("entries/index.html", "Entries"),
    ("downloads.html", "Downloads"),
    ("about.html", "About"),
)


def page(title: str, path: str, body: str, footer: str) -> str:
    """A whole page at ``path`` (relative to the site's root), linking the site's style,
    script and navigation relatively, so the site opens from a folder as from a server."""
    root = "../" * path.count("/")
    links = "".join(
        f'<a href="{root}{target}"'
        + (' aria-current="page"' if target == path else "")
        + f">{esc(name)}</a>"
        for target, name in NAV
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{esc(title)} · SABER board</title>\n"
        f'<link rel="stylesheet" href="{root}{STYLE_FILE}">\n'
        f'<script src="{root}{SCRIPT_FILE}" defer></script></head>\n<body>\n'
        f'<header><nav aria-label="SABER board">{links}</nav></header>\n'
        f"<main>\n<h1>{esc(title)}</h1>\n{body}\n</main>\n"
        f"<footer>{footer}</footer>\n</body></html>\n"
    )


def pct(value: float | None, infinite: bool = False) -> str:
    """A percentage as the board shows it (``12.3%``, ``∞``, ``–`` for none)."""
    if infinite:
        return "∞"
    if value is None:
        return "–"
    return f"{value if round(value, 1) else 0.0:.1f}%"  # never "-0.0%"


def with_interval(
    value: float | None, interval: Sequence[float | None], infinite: bool = False
) -> str:
    """``12.3% [10.1%, 14.0%]``, or the value alone when there is no interval."""
    low, high = ([*list(interval), None, None])[:2]
    shown = pct(value, infinite)
    if low is None or high is None:
        return shown
    return f"{shown} [{pct(low)}, {pct(high)}]"


def frames(value: int | None) -> str:
    """Training frames: ``200M``, ``21.0M``, ``0``, ``–`` (not said)."""
    if value is None:
        return "–"
    if value >= 1_000_000:
        millions = value / 1_000_000
        return f"{millions:.0f}M" if millions == round(millions) else f"{millions:.1f}M"
    return f"{value:,}"


def listing(items: Sequence[str]) -> str:
    """A bulleted list of text items."""
    return "<ul>" + "".join(f"<li>{esc(item)}</li>" for item in items) + "</ul>"


def facts(pairs: Sequence[tuple[str, str]]) -> str:
    """Label: value pairs as a description list (no table: they are not a grid of data)."""
    return (
        '<dl class="facts">' + "".join(f"<dt>{esc(k)}</dt><dd>{v}</dd>" for k, v in pairs) + "</dl>"
    )
