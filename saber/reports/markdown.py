"""The report as Markdown (``saber report``'s stdout and ``report.md``): the summary tables,
the comparisons' matrices and the per-game tables of :mod:`saber.reports.tables`, in text
that reads in a terminal too."""

from __future__ import annotations

import textwrap

from saber.reports.comparisons import comparison_blocks, comparison_notes
from saber.reports.model import ReportLike, as_report
from saber.reports.tables import (
    SOURCES_TITLE,
    intro,
    markdown_table,
    notes,
    per_game_tables,
    source_lines,
    summary_tables,
    top_lines,
)


def to_markdown(report: ReportLike) -> str:
    """The report as Markdown: the summary, then one per-game table per time limit.

    Laid out as the SABER paper: world-record-normalized median and mean, games per
    class from superhuman to failing, then raw scores beside the reference scores. The
    columns line up, so the same text reads in a terminal (``saber report DIR``). Time
    limits with identical results share one table (``time_limit_groups``).
    """
    report = as_report(report)
    lines = ["# SABER report", ""]
    warning, warnings, sources = top_lines(report)
    if warning:
        bold, rest = warning.split(". ", 1)
        lines += [f"> **{bold}.** {rest}", ""]
    lines += [f"> {w}" for w in warnings]
    lines += [""] if warnings else []
    lines += ["Scores: " + ", ".join(f"`{s}`" for s in sources), ""]
    summary = []
    for table in summary_tables(report):
        summary += [*markdown_table(table.header, table.rows, table.align), ""]
    lines += [
        "## Summary",
        "",
        textwrap.fill(intro(report), width=90),  # reads in a terminal; Markdown joins the lines
        "",
        *summary,
        *(f"- {line}" for line in notes(report)),
    ]
    for block in comparison_blocks(report):
        lines += ["", f"### Comparisons, {block.title}", ""]
        for matrix in (block.improvement, block.welch):
            if matrix is not None:
                lines += [*markdown_table(matrix.header, matrix.rows, matrix.align), ""]
        lines += block.lines
    compared = comparison_notes(report)
    if compared:
        lines += ["", *(f"- {line}" for line in compared)]
    for title, table in per_game_tables(report):
        lines += ["", f"## Per-game scores, {title}", ""]
        lines += markdown_table(table.header, table.rows, table.align)
    lines += ["", SOURCES_TITLE, "", *(f"- {line}" for line in source_lines(report))]
    return "\n".join(lines) + "\n"
