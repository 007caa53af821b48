"""The board's entry pages: every entry with its status (``entries/index.html``,
``entries.csv``, ``entries.json``), and each one's page (status, verification, provenance,
settings, versions, the command that reproduces its evaluation), report and downloads."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Sequence
from typing import Any

from saber.board.entries import STATUSES, Entry
from saber.board.pages import Cell, esc, facts, frames, listing, page, status_cell, table
from saber.board.ranking import LIMIT, Reports
from saber.reports import to_csv

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
        footer: the pages' footer (HTML).
    """

    def __init__(
        self,
        entries: list[Entry],
        notes: list[str],
        reports: Reports,
        report_page: Callable[[Entry], str],
        footer: str,
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
        body = f"<p>{len(self.entries)} entries: {esc(counts)}.</p>" + table(
            "Every entry and its status", ["Entry", "Status", "Kind", "Games", "Why"], cells
        )
        if self.notes:
            body += "<h2>Given twice, or copied</h2>" + listing(self.notes)
        self.files["entries/index.html"] = page("Entries", "entries/index.html", body, self.footer)
        for entry in self.entries:
            self._entry_files(entry)

    def _entry_files(self, entry: Entry) -> None:
        folder = f"entries/{entry.id}"
        links = []
        if entry.table is not None:
            report = self.reports.of(entry)
            self.files[f"{folder}/report.html"] = self._report_page(entry)
            # saber report's JSON without its indentation: two thirds of the bytes
            self.files[f"{folder}/report.json"] = (
                json.dumps(report.to_dict(), separators=(",", ":"), allow_nan=False) + "\n"
            )
            self.files[f"{folder}/scores.csv"] = to_csv(report)
            links = [
                '<a href="report.html">its SABER report, with figures</a>',
                '<a href="report.json">the report as JSON</a>',
                '<a href="scores.csv">per-game scores (CSV)</a>',
            ]
        parts = [
            f"<p>{status_cell(entry).inner()}: {esc(entry.reason)}</p>",
        ]
        if links:
            parts.append("<p>" + " · ".join(links) + "</p>")
        about = [
            ("Kind", esc(entry.kind)),
            ("Given as", f"<code>{esc(entry.given)}</code>"),
            ("Content SHA-256", f"<code>{esc(entry.key)}</code>"),
            ("Date", esc(entry.date or "not said")),
            ("Training frames", esc(frames(entry.training_frames))),
        ]
        if entry.citation:
            about.append(("Citation", esc(entry.citation)))
        about += [(k, esc(v)) for k, v in entry.facts.items()]
        if entry.same_as:
            about.append(("Also given as", esc(", ".join(entry.same_as)) + " (counted once)"))
        parts += ["<h2>Provenance</h2>", facts(about)]
        if entry.verification is not None:
            parts += ["<h2>Verification</h2>", self._verification(entry)]
        if entry.deviations:
            parts += ["<h2>Settings that are not SABER's</h2>", listing(entry.deviations)]
        if entry.table is not None and entry.table.warnings:  # an unfinished run, failed episodes
            parts += ["<h2>Notes on its scores</h2>", listing(entry.table.warnings)]
        parts.append("<h2>Reproduce its evaluation</h2>")
        parts.append(
            f"<pre><code>{esc(entry.command)}</code></pre>"
            if entry.command
            else "<p>No command: these scores were published, not evaluated by saber.</p>"
        )
        if entry.settings:
            parts.append(
                table(
                    "Settings of its evaluation",
                    ["Setting", "Value"],
                    [[Cell(k), Cell(repr(v))] for k, v in entry.settings.items()],
                    sortable=False,
                    stacked=False,
                )
            )
        if entry.versions:
            parts.append(
                table(
                    "Versions it was evaluated with",
                    ["Package", "Version"],
                    [[Cell(k), Cell(str(v))] for k, v in entry.versions.items()],
                    sortable=False,
                    stacked=False,
                )
            )
        self.files[f"{folder}/index.html"] = page(
            entry.label, f"{folder}/index.html", "\n".join(parts), self.footer
        )

    def _report_page(self, entry: Entry) -> str:
        """The entry's report page (``saber report --html``, a page of its own) with a way
        back to the entry's page and the board."""
        back = (
            '<nav aria-label="SABER board"><p><a href="index.html">'
            f'{esc(entry.label)} on the SABER board</a> · <a href="../../index.html">the '
            "ranking</a></p></nav>"
        )
        return self.report_page(entry).replace("<main>", f"<main>\n{back}", 1)

    def _verification(self, entry: Entry) -> str:
        found = entry.verification or {}
        played, finished = found.get("played", 0), found.get("finished", 0)
        seeds = sorted({str(run.get("seed")) for run in found.get("runs", [])})
        what = (
            f"Every replay's file, SHA-256 and header was checked against its record; "
            f"{played} of {finished} finished episodes were played again"
        )
        if found.get("sample") is not None and played < finished:
            what += (
                f", a sample drawn at build time (--sample {found['sample']}, seed "
                f"{', '.join(seeds)}: a seed no one knew before the build). To repeat this check:"
            )
            parts = [f"<p>{esc(what)}</p>", _commands(found.get("repeat", [])),
                     "<p>To check every replay:</p>"]  # fmt: skip
        else:
            parts = [f"<p>{esc(what)}. To check them yourself:</p>"]
        parts.append(_commands(found.get("check_all", [])))
        if found.get("budget"):
            parts.append(
                f"<p>The build's budget: {found['budget']:,} agent steps of play a run.</p>"
            )
        for run in found.get("runs", []):
            lines = [*run.get("problems", []), *(f"note: {n}" for n in run.get("notes", []))]
            if run.get("error"):
                lines.insert(0, run["error"])
            if lines:
                parts.append(f"<p><code>{esc(run['directory'])}</code>:</p>" + listing(lines))
        return "\n".join(parts)


def _commands(commands: Sequence[str]) -> str:
    return f"<pre><code>{esc(chr(10).join(commands))}</code></pre>"
