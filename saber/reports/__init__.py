"""Reports: every statistic of a score table as typed objects (a JSON document), and renderings.

docs/reports.md describes the report, its JSON keys and each rendering; the figures
(:mod:`saber.reports.plots`) need the ``plots`` extra and are imported only when used.
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
