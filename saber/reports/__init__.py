"""Reports: every statistic of a score table as typed objects (a JSON document), and renderings.

Example (illustration, not run as a doctest)::

    from saber.reports import build_report, to_markdown
    report = build_report(read_scores("scores.csv"))
    print(to_markdown(report))

Plots live in :mod:`saber.reports.plots` (matplotlib, the ``plots`` extra), imported
only when used; LaTeX tables in :mod:`saber.reports.latex` (``to_latex``), the
self-contained HTML page in :mod:`saber.reports.html` (``to_html``, with the figures).
"""

from __future__ import annotations

from saber.reports.model import SCHEMA_VERSION, Report
from saber.reports.report import REPORT_FORMAT, build_report, make_report
from saber.reports.tables import to_csv, to_json, to_markdown

__all__ = [
    "REPORT_FORMAT",
    "SCHEMA_VERSION",
    "Report",
    "build_report",
    "make_report",
    "to_csv",
    "to_json",
    "to_markdown",
]
