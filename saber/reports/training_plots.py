"""The training-curve figure (``saber training LOG --plots DIR``): the user's curve beside references.

Everything drawn comes from :func:`saber.reports.training.training_curves`; docs/reports.md
describes the figure.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from saber.errors import UnknownGameError
from saber.games import get_game
from saber.protocol.training import checkpoint_label
from saber.reports.figures.files import figure_directory, save_figure
from saber.reports.figures.style import (
    MARKERS,
    PAGE_WIDTH,
    PALETTE,
    REFERENCE_DASHES,
    REFERENCE_GREYS,
    drawing,
    legend_above,
    legend_columns,
    new_figure,
)
from saber.reports.tables import NOT_SABER_MARK

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from saber.reports.training import ReferenceCurve, TrainingCurve

HEIGHT = 3.0  # inches: the curves and the notes below, without the legend
LEGEND_ROW = 0.17  # inches per row of the legend above


def _title(game: str) -> str:
    try:
        return get_game(game).title
    except UnknownGameError:
        return game


def plot_training_curve(curve: TrainingCurve, agent: str = "your agent") -> Figure:
    """One game's figure: the user's curve, the references' bands, the checkpoints.

    Args:
        curve: from :func:`saber.reports.training.training_curves`.
        agent: the legend's name of the user's curve.
    """
    own = f"{agent}: mean of the last 100 training episodes"
    names = [f"{r.agent} (reference {NOT_SABER_MARK})" for r in curve.references] + [own]
    rows = -(-len(names) // legend_columns(names, PAGE_WIDTH))
    with drawing():
        fig = new_figure(PAGE_WIDTH, HEIGHT + LEGEND_ROW * rows)
        ax = fig.add_subplot()
        handles, labels = [_draw_own_curve(ax, curve)], [own]
        notes = []
        for i, reference in enumerate(curve.references):
            handles.append(_draw_reference(ax, reference, i))
            mark = f" {NOT_SABER_MARK}" if reference.deviations else ""
            labels.append(f"{reference.agent} (reference{mark})")
            if reference.deviations and reference.deviations not in notes:
                notes.append(reference.deviations)
        _frames_axis(ax, curve)
        ax.set_ylabel("training score (raw points)")
        ax.set_title(f"{_title(curve.game)}: training-time score", pad=10)
        ax.grid(axis="y", alpha=0.25, linewidth=0.5)
        legend_above(fig, handles, labels)
        width = int(PAGE_WIDTH / 0.052)  # characters of 7-pt text across the figure
        caption = _caption(curve, agent, notes)
        fig.supxlabel("\n".join(textwrap.fill(line, width) for line in caption), fontsize=6.5)
    return fig


def _draw_own_curve(ax: Axes, curve: TrainingCurve) -> Any:
    """The user's curve, with a filled marker at each checkpoint it has a score at."""
    (line,) = ax.plot(curve.frames, curve.mean, color=PALETTE[0], linewidth=1.2)
    for score in curve.checkpoints:
        if score.mean is not None:
            ax.plot(score.at_frames, score.mean, marker=MARKERS[0], color=PALETTE[0])
    return line


def _draw_reference(ax: Axes, reference: ReferenceCurve, index: int) -> Any:
    """The ``index``-th reference in grey, dashed: its band over runs, its mean, and a
    hollow marker with its interval at each checkpoint it has a score at."""
    grey = REFERENCE_GREYS[index % len(REFERENCE_GREYS)]
    dash = REFERENCE_DASHES[index % len(REFERENCE_DASHES)]
    marker = MARKERS[(index + 1) % len(MARKERS)]
    if np.isfinite(reference.low).any():
        ax.fill_between(
            reference.frames, reference.low, reference.high, color=grey, alpha=0.18, lw=0
        )
    (line,) = ax.plot(reference.frames, reference.mean, color=grey, linestyle=dash, linewidth=0.9)
    for frames, cell in reference.checkpoints.items():
        if cell is None or cell.score is None:
            continue
        error = None
        if cell.low is not None and cell.high is not None:
            error = [[cell.score - cell.low], [cell.high - cell.score]]
        ax.errorbar(
            frames,
            cell.score,
            yerr=error,
            marker=marker,
            color=grey,
            markerfacecolor="white",
            capsize=2,
            linewidth=0.8,
        )
    return line


def _frames_axis(ax: Axes, curve: TrainingCurve) -> None:
    """A log x axis over every curve's frames, with the checkpoints dotted and named."""
    ax.set_xscale("log")
    lows = [curve.frames.min()] if curve.frames.size else []
    highs = [curve.frames.max()] if curve.frames.size else []
    for reference in curve.references:
        lows.append(reference.frames.min())
        highs.append(reference.frames.max())
    checkpoints = sorted(
        {s.at_frames for s in curve.checkpoints if s.reached}  # the axis stops at the log
        | {f for r in curve.references for f in r.checkpoints}
    )
    highs += checkpoints
    ax.set_xlim(min(lows) / 1.3, max(highs) * 1.3)
    for frames in checkpoints:
        ax.axvline(frames, color="0.6", linewidth=0.5, linestyle=":", zorder=0)
        ax.annotate(
            checkpoint_label(frames),
            (frames, 1.0),
            xycoords=("data", "axes fraction"),
            ha="center",
            va="bottom",
            fontsize=6,
            color="0.4",
        )


def _caption(curve: TrainingCurve, agent: str, notes: Sequence[str]) -> list[str]:
    """The lines under the axes: the x axis, the checkpoints not reached, what the bands
    are, and how each not-SABER reference differs (``notes``)."""
    caption = ["cumulative training frames (log scale); checkpoints dotted"]
    unreached = [s for s in curve.checkpoints if not s.reached]
    if unreached:
        ended = unreached[0].log_frames
        caption.append(
            f"{agent}: {', '.join(checkpoint_label(s.at_frames) for s in unreached)} not "
            f"reached (the log ends at {'no episode' if ended is None else f'{ended:,}'} "
            "frames): no score there"
        )
    if any(np.isfinite(r.low).any() for r in curve.references):
        caption.append(
            "bands and bars: 95% bootstrap intervals over the reference's runs; "
            "Dopamine: one point per 1M-frame iteration (mean training return), at "
            "its end; 200M: iteration 198 (198M-199M), the last published"
        )
    return caption + [f"{NOT_SABER_MARK} {note}" for note in notes]


def save_training_plots(
    curves: Sequence[TrainingCurve],
    directory: str | Path,
    formats: Sequence[str] = ("png",),
    dpi: int = 300,
    agent: str = "your agent",
) -> list[Path]:
    """Write ``training_<game>.<format>`` for each curve into ``directory``.

    Raises:
        PlotsUnavailableError: matplotlib is not installed (nothing is written).
        SaberError: an unknown format.
    """
    directory = figure_directory(directory, formats)
    paths = []
    for curve in curves:
        fig = plot_training_curve(curve, agent)
        paths += [
            save_figure(fig, directory / f"training_{curve.game}.{fmt}", dpi) for fmt in formats
        ]
    return paths
