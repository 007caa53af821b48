"""The board's pages: plain HTML tables, one style sheet and a few lines of JavaScript that
sort them, all local (docs/board.md, "The site")."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

import jinja2
from markupsafe import Markup

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
    + "\n"
    + resources.files("saber.board").joinpath("static", STYLE_FILE).read_text(encoding="utf-8")
)
# Sorts any table.sortable by the column whose header is clicked (again: the other way).
SCRIPT = resources.files("saber.board").joinpath("static", SCRIPT_FILE).read_text(encoding="utf-8")
_TEMPLATES = jinja2.Environment(
    loader=jinja2.PackageLoader("saber.board", "templates"),
    autoescape=True,  # text from entries is data: never markup
    undefined=jinja2.StrictUndefined,
    keep_trailing_newline=False,
)


def render(template: str, **values: Any) -> Markup:
    """A template of ``saber/board/templates`` filled with ``values`` (escaped, unless
    :class:`~markupsafe.Markup`, which only this function makes: every fragment of HTML is
    a template's, never text formatted in Python)."""
    return Markup(_TEMPLATES.get_template(template).render(**values))


@dataclass(frozen=True)
class Cell:
    """One cell: its text, the value it sorts by (None: its text), a link, or a rendered
    template (:func:`render`) in place of its text."""

    text: str
    sort: float | str | None = None
    href: str | None = None
    markup: Markup | None = None

    def inner(self) -> Markup:
        """The cell's HTML content: its text may wrap before an interval in brackets
        (``19.5%`` over ``[18.0%, 20.7%]``), never inside it (cell.html)."""
        if self.markup is not None:
            return self.markup
        return render("cell.html", text=self.text, href=self.href)


def table(
    caption: str,
    header: Sequence[str],
    rows: Sequence[Sequence[Cell]],
    sortable: bool = True,
    stacked: bool = True,
) -> Markup:
    """A captioned table; the first cell of each row is its row header. ``stacked``: on a
    phone, one box per row (a wide table); else it stays a table (two columns fit)."""
    for row in rows:
        if len(row) != len(header):
            raise ValueError(f"a row of {len(row)} cells under {len(header)} headers")
    return render("table.html", caption=caption, header=header, rows=rows,
                      sortable=sortable, stacked=stacked, sort_value=_sort_value)  # fmt: skip


def _sort_value(value: float | str) -> str:
    if isinstance(value, float) and not math.isfinite(value):
        return "1e308" if value > 0 else "-1e308"
    return str(value)


def status_cell(entry: Entry) -> Cell:
    """The status as a word and a symbol, with its colour as a border."""
    markup = render("status.html", css=_CSS_CLASS[entry.status], symbol=_SYMBOLS[entry.status],
                    status=entry.status)  # fmt: skip
    return Cell(entry.status, sort=str(list(_CSS_CLASS).index(entry.status)), markup=markup)


NAV = (
    ("index.html", "Ranking"),
    ("games/index.html", "Games"),
    ("entries/index.html", "Entries"),
    ("downloads.html", "Downloads"),
    ("about.html", "About"),
)


def page(title: str, path: str, body: Markup, footer: Markup) -> str:
    """A whole page at ``path`` (relative to the site's root), linking the site's style,
    script and navigation relatively, so the site opens from a folder as from a server.
    ``body`` and ``footer`` are rendered templates (:func:`render`); ``title`` is text."""
    root = "../" * path.count("/")
    shell = render("page.html", title=title, path=path, root=root, nav=NAV, style=STYLE_FILE,
                   script=SCRIPT_FILE, body=body, footer=footer)  # fmt: skip
    return str(shell) + "\n"


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
