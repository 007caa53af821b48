"""Every figure of a report, and figures written to files (whole or absent) or to bytes."""

from __future__ import annotations

import io
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from saber.errors import SaberError
from saber.reports.figures.intervals import plot_aggregates, plot_improvement, plot_time_limits
from saber.reports.figures.scores import plot_classes, plot_per_game, plot_profile
from saber.reports.figures.style import FORMATS, drawing, require_matplotlib
from saber.reports.model import Report, as_report
from saber.reports.tables import NOT_SABER_MARK

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def report_figures(
    report: Report | Mapping[str, Any],
    time_limits: Sequence[str] | None = None,
    across_limits: bool = True,
) -> dict[str, Figure]:
    """Every figure of the report that its data can fill, by file name (no suffix).

    Args:
        report: from :func:`saber.reports.make_report`, or its JSON dict
            (``make_report(...).to_dict()``).
        time_limits: the limits to draw (default: all of the report's).
        across_limits: also the ``time_limits`` figure (when the report has several).

    Raises:
        PlotsUnavailableError: matplotlib is not installed.
    """
    require_matplotlib()
    report = as_report(report)
    figures: dict[str, Figure | None] = {}
    for limit in report.time_limits if time_limits is None else time_limits:
        figures[f"classes_{limit}"] = plot_classes(report, limit)
        figures[f"per_game_{limit}"] = plot_per_game(report, limit)
        figures[f"profile_{limit}"] = plot_profile(report, limit)
        figures[f"aggregates_{limit}"] = plot_aggregates(report, limit)
        figures[f"improvement_{limit}"] = plot_improvement(report, limit)
    if across_limits:
        figures["time_limits"] = plot_time_limits(report)
    drawn = {name: fig for name, fig in figures.items() if fig is not None}
    for fig in drawn.values():
        _not_saber_note(fig, report)
    return drawn


def _not_saber_note(fig: Figure, report: Report) -> None:
    """Say under the figure how its not-SABER references (‡) differ from SABER."""
    by_label: dict[str, list[str]] = {}
    for agent, label in report.deviations_by_agent().items():
        by_label.setdefault(label, []).append(agent)
    if by_label:
        width = int(fig.get_figwidth() / 0.05)  # characters of 6-pt text across the figure
        lines = [f"{NOT_SABER_MARK} {', '.join(a)}: {label}" for label, a in by_label.items()]
        # Under the axes, after the caption a figure may have: a title above would share
        # the space of the legend there.
        caption = [fig.get_supxlabel()] if fig.get_supxlabel() else []
        caption += [textwrap.fill(line, width) for line in lines]
        added = sum(text.count("\n") + 1 for text in caption[-len(lines) :])
        fig.set_figheight(fig.get_figheight() + 0.1 * added)  # 6-pt lines: the axes keep theirs
        with drawing():
            fig.supxlabel("\n".join(caption), fontsize=6)


def figure_directory(directory: str | Path, formats: Sequence[str]) -> Path:
    """Check the formats and matplotlib, then create ``directory``: nothing is written on error.

    Raises:
        PlotsUnavailableError: matplotlib is not installed.
        SaberError: an unknown format.
    """
    unknown = [f for f in formats if f not in FORMATS]
    if unknown:
        raise SaberError(f"Unknown figure format {', '.join(unknown)}; use {', '.join(FORMATS)}")
    require_matplotlib()
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def save_plots(
    report: Report | Mapping[str, Any],
    directory: str | Path,
    formats: Sequence[str] = ("png",),
    dpi: int = 300,
) -> list[Path]:
    """Write every figure of the report into ``directory`` (created if needed).

    Args:
        report: from :func:`saber.reports.make_report`, or its JSON dict
            (``make_report(...).to_dict()``).
        directory: where to write ``<figure>.<format>``.
        formats: any of :data:`FORMATS`; ``pdf`` and ``svg`` are vector figures for papers.
        dpi: resolution of PNG figures, in dots per inch.

    Returns:
        The paths written, figure by figure.

    Raises:
        PlotsUnavailableError: matplotlib is not installed (nothing is written).
        SaberError: an unknown format.
    """
    return save_figures(report_figures(report), directory, formats, dpi)


def figure_paths(
    figures: dict[str, Figure], directory: str | Path, formats: Sequence[str]
) -> list[Path]:
    """Where :func:`save_figures` writes ``figures``: ``<directory>/<name>.<format>``."""
    return [Path(directory) / f"{name}.{fmt}" for name in figures for fmt in formats]


def save_figures(
    figures: dict[str, Figure],
    directory: str | Path,
    formats: Sequence[str] = ("png",),
    dpi: int = 300,
) -> list[Path]:
    """Write figures by file name (no suffix) into ``directory``, each in every format.

    Raises:
        PlotsUnavailableError: matplotlib is not installed (nothing is written).
        SaberError: an unknown format.
        OSError: a figure could not be written (those before it are whole).
    """
    directory = figure_directory(directory, formats)
    paths = figure_paths(figures, directory, formats)
    for path in paths:
        save_figure(figures[path.stem], path, dpi)
    return paths


def _write_figure(fig: Figure, target: str | Path | IO[bytes], fmt: str, dpi: int) -> None:
    """``fig`` as a ``fmt`` file into ``target``; PDF and SVG without a creation date, so
    that the same report gives the same bytes."""
    metadata = {"pdf": {"CreationDate": None}, "svg": {"Date": None}}.get(fmt, {})
    with drawing():
        fig.savefig(target, format=fmt, dpi=dpi, metadata=metadata)


def save_figure(fig: Figure, path: str | Path, dpi: int = 300) -> Path:
    """Write one figure; the format follows the suffix (``.png``, ``.pdf``, ``.svg``).

    PDF and SVG files carry no creation date, so the same report gives the same bytes.
    """
    from saber.rundir.durable import writing_atomically

    path = Path(path)
    # Whole or absent: a full disk leaves no half figure under the name.
    with writing_atomically(path) as temporary:
        _write_figure(fig, temporary, path.suffix.lstrip(".").lower(), dpi)
    return path


def figure_bytes(fig: Figure, fmt: str = "png", dpi: int = 200) -> bytes:
    """One figure as the bytes of a file (``png``, ``pdf`` or ``svg``), for a page to inline."""
    out = io.BytesIO()
    _write_figure(fig, out, fmt, dpi)
    return out.getvalue()
