"""Figures of a report (:func:`saber.reports.make_report`, or its JSON dict), for a paper.

matplotlib is the optional ``plots`` extra, imported when a figure is drawn. Figures are
built with ``matplotlib.figure.Figure`` (no pyplot state, no display needed). Nothing is
computed here: every number comes from the report; the figures only lay it out. This
module is their public home; the code lives in :mod:`saber.reports.figures`, a module a job.

Layout rules, so a figure can go into a paper unchanged:

- widths of one column (:data:`COLUMN_WIDTH`, 3.3 in) or two (:data:`PAGE_WIDTH`,
  6.9 in) with 7-8 pt text, so nothing is scaled down by LaTeX;
- the Okabe-Ito colour-blind-safe palette; an agent keeps its colour in every figure
  (colours follow the report's agent order);
- a reference agent (a name with ``@``: ``rainbow@saber-paper``, ``random@saber``) is
  drawn in grey, hollow and dashed, so it never passes for a run of the user's;
- legends sit outside the axes, never on the data; class counts on integer axes;
- intervals as in Agarwal et al. (2021, rliable): one panel per metric, each agent a
  coloured bar spanning its interval with a black tick at the estimate.

Example (illustration, not run as a doctest)::

    from saber.reports.plots import save_plots
    save_plots(report, "figures/", formats=("png", "pdf"))
    # -> [PosixPath('figures/classes_saber.png'), PosixPath('figures/classes_saber.pdf'), ...]

One file per figure, time limit and format (``classes_<limit>``, ``per_game_<limit>``,
``profile_<limit>``, ``aggregates_<limit>``; limits ``5min``, ``30min``, ``saber``), and
``time_limits`` when the report has more than one time limit.
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
