"""Figures of a report (:func:`saber.reports.make_report`, or its JSON dict), for a paper.

The public home of the figures (the code: :mod:`saber.reports.figures`); matplotlib is the
``plots`` extra. docs/reports.md lists the figures, files and layout rules.
"""

from __future__ import annotations

from saber.reports.figures.files import report_figures, save_figures, save_plots
from saber.reports.figures.intervals import plot_aggregates, plot_improvement
from saber.reports.figures.scores import plot_per_game, plot_profile
from saber.reports.figures.style import PlotsUnavailableError

__all__ = [
    "PlotsUnavailableError",
    "plot_aggregates",
    "plot_improvement",
    "plot_per_game",
    "plot_profile",
    "report_figures",
    "save_figures",
    "save_plots",
]
