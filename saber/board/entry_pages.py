"""The board's entry pages: every entry with its status (``entries/index.html``,
``entries.csv``, ``entries.json``), and each one's page (status, verification, provenance,
settings, versions, the command that reproduces its evaluation), report and downloads."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Sequence
from typing import Any

from markupsafe import Markup

from saber.board.entries import STATUSES, Entry
from saber.board.pages import Cell, frames, page, render, status_cell, table
from saber.board.ranking import LIMIT, Reports
from saber.errors import counted
from saber.reports import to_csv

MAIN = "<main>"  # where a report page's content starts (saber.reports.html)
ENTRY_COLUMNS = (
    "entry", "entry_id", "kind", "status", "reason", "games", "episodes", "training_frames",
    "date", "citation", "command", "given",
)  # fmt: skip


def rows_csv(columns: Sequence[str], rows: Sequence[dict[str, Any]]) -> str:
    """``rows`` as CSV under ``columns``."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(columns), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def rows_json(columns: Sequence[str], rows: Sequence[dict[str, Any]]) -> str:
    """``rows`` as a JSON document with its ``columns``."""
    return json.dumps({"columns": list(columns), "rows": list(rows)}, indent=1) + "\n"


class EntryPages:
    """Renders the entries' files.

    Args:
        entries: every entry, statuses decided; notes: lines about ENTRYs counted once.
        reports: each entry's reports; report_page: entry -> its report as one HTML page.
        footer: the pages' footer (a rendered template).
    """

    def __init__(
        self,
        entries: list[Entry],
        notes: list[str],
        reports: Reports,
        report_page: Callable[[Entry], str],
        footer: Markup,
    ) -> None:
        self.entries, self.notes, self.reports = entries, notes, reports
        self.report_page, self.footer = report_page, footer
        self.files: dict[str, str] = {}

    def render(self) -> dict[str, str]:
        """Every entry file, by path."""
        self._entries()
        return self.files

    def _entry_row(self, entry: Entry) -> dict[str, Any]:
        games = len({r.game for r in entry.table.records}) if entry.table else 0
        episodes = (
            sum(1 for r in entry.table.records if r.time_limit == LIMIT) if entry.table else 0
        )
        return {
            "entry": entry.label,
            "entry_id": entry.id,
            "kind": entry.kind,
            "status": entry.status,
            "reason": entry.reason,
            "games": games,
            "episodes": episodes,
            "training_frames": entry.training_frames,
            "date": entry.date,
            "citation": entry.citation,
            "command": entry.command,
            "given": entry.given,
        }

    def _entries(self) -> None:
        rows = [self._entry_row(entry) for entry in self.entries]
        self.files["entries.csv"] = rows_csv(ENTRY_COLUMNS, rows)
        self.files["entries.json"] = rows_json(ENTRY_COLUMNS, rows)
        cells = [
            [
                Cell(entry.label, href=f"{entry.id}/index.html"),
                status_cell(entry),
                Cell(entry.kind),
                Cell(str(row["games"]), sort=row["games"]),
                Cell(entry.reason),
            ]
            for entry, row in zip(self.entries, rows, strict=True)
        ]
        counts = ", ".join(f"{sum(e.status == s for e in self.entries)} {s}" for s in STATUSES)
        body = render(
            "entries.html",
            count=counted(len(self.entries), "entry"),
            counts=counts,
            entries=table(
                "Every entry and its status", ["Entry", "Status", "Kind", "Games", "Why"], cells
            ),
            notes=self.notes,
        )
        self.files["entries/index.html"] = page("Entries", "entries/index.html", body, self.footer)
        for entry in self.entries:
            self._entry_files(entry)

    def _entry_files(self, entry: Entry) -> None:
        folder = f"entries/{entry.id}"
        if entry.table is not None:
            report = self.reports.of(entry)
            self.files[f"{folder}/report.html"] = self._report_page(entry)
            # saber report's JSON without its indentation: two thirds of the bytes
            self.files[f"{folder}/report.json"] = (
                json.dumps(report.to_dict(), separators=(",", ":"), allow_nan=False) + "\n"
            )
            self.files[f"{folder}/scores.csv"] = to_csv(report)
        about = [
            ("Kind", entry.kind, False),
            ("Given as", entry.given, True),
            ("Content SHA-256", entry.key, True),
            ("Date", entry.date or "not said", False),
            ("Training frames", frames(entry.training_frames) + _declared(entry), False),
            *((("Citation (as given)", entry.citation, False),) if entry.citation else ()),
            *((k, v, False) for k, v in entry.facts.items()),
        ]
        if entry.same_as:
            about.append(("Also given as", f"{', '.join(entry.same_as)} (counted once)", False))
        settings = _two_columns(
            "Settings its run.json states (it is judged by those its replays were played with)",
            ("Setting", "Value"),
            {key: repr(value) for key, value in entry.settings.items()},
        )
        versions = _two_columns(
            "Versions it was evaluated with",
            ("Package", "Version"),
            {key: str(value) for key, value in entry.versions.items()},
        )
        body = render(
            "entry.html",
            entry=entry,
            status=status_cell(entry).inner(),
            about=about,
            verification=_verification(entry) if entry.verification is not None else "",
            warnings=entry.table.warnings if entry.table is not None else [],
            settings=settings if entry.settings else "",
            versions=versions if entry.versions else "",
        )
        self.files[f"{folder}/index.html"] = page(
            entry.label, f"{folder}/index.html", body, self.footer
        )

    def _report_page(self, entry: Entry) -> str:
        """The entry's report page (``saber report --html``, a page of its own) with a way
        back to the entry's page and the board, at the start of its main element."""
        main = render("report_back.html", label=entry.label)  # "<main>", then the way back
        return self.report_page(entry).replace(MAIN, str(main), 1)


def _two_columns(caption: str, headings: tuple[str, str], rows: dict[str, str]) -> Markup:
    """A fixed table of names and their values (an entry's settings, its versions)."""
    cells = [[Cell(name), Cell(value)] for name, value in rows.items()]
    return table(caption, list(headings), cells, sortable=False, stacked=False)


def _declared(entry: Entry) -> str:
    """Training frames are declared, never proven: said so when there are any."""
    return " (declared)" if entry.training_frames else ""


def _verification(entry: Entry) -> Markup:
    """What verifying the entry's runs found, with the commands that repeat it."""
    found = entry.verification or {}
    played, finished = found.get("played", 0), found.get("finished", 0)
    runs = []
    for run in found.get("runs", []):
        lines = [*run.get("problems", []), *(f"note: {n}" for n in run.get("notes", []))]
        if run.get("error"):
            lines.insert(0, run["error"])
        if lines:
            runs.append((run["directory"], lines))
    return render(
        "verification.html",
        played=played,
        finished=finished,
        sampled=found.get("sample") is not None and played < finished,
        sample=found.get("sample"),
        seeds=", ".join(sorted({str(run.get("seed")) for run in found.get("runs", [])})),
        repeat="\n".join(found.get("repeat", [])),
        check_all="\n".join(found.get("check_all", [])),
        budget=found.get("budget"),
        runs=runs,
    )
