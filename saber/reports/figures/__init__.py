"""The figures of a report, one job a module; :mod:`saber.reports.plots` is their public home.

- :mod:`.style`: paper widths, the palette, one style per agent, legends, the matplotlib
  guard (:class:`~saber.reports.figures.style.PlotsUnavailableError`);
- :mod:`.axes`: the axes' scales and percent ticks;
- :mod:`.scores`: the figures of scores (classes, per game, score distribution);
- :mod:`.intervals`: the figures of intervals (aggregates, probability of improvement,
  time limits);
- :mod:`.files`: every figure of a report, and writing figures to files.

Every figure reads the typed report (:class:`saber.reports.model.Report`); given the JSON
dict of ``make_report(...).to_dict()``, it reads it as one first.
"""
