"""The figures of a report, one job a module; :mod:`saber.reports.plots` is their public home.

Every figure reads the typed report (:class:`saber.reports.model.Report`) or its JSON dict;
docs/reports.md lists the figures.
"""
