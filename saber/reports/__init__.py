"""Reports: every statistic of a score table as typed objects (a JSON document), and renderings.

Example (illustration, not run as a doctest)::

    from saber.reports import make_report, to_markdown
    report = make_report(read_scores("scores.csv"))  # a typed Report
    print(to_markdown(report))
    document = report.to_dict()  # its JSON document (saber report --json)

Plots live in :mod:`saber.reports.plots` (matplotlib, the ``plots`` extra), imported
only when used; LaTeX tables in :mod:`saber.reports.latex` (``to_latex``), the
self-contained HTML page in :mod:`saber.reports.html` (``to_html``, with the figures).
"""

from __future__ import annotations

from saber.reports.markdown import to_markdown
from saber.reports.model import Report
from saber.reports.report import make_report
from saber.reports.tables import to_csv, to_json

__all__ = [
    "Report",
    "make_report",
    "to_csv",
    "to_json",
    "to_markdown",
]
