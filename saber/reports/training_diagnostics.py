"""A training's per-update diagnostics (``updates.jsonl``) and their figure.

``saber training LOG --plots DIR`` draws them when ``updates.jsonl`` lies beside LOG: a
JSON object a line, with ``update`` (1 for the first), ``frames`` (at the update's end),
any named numbers (null where undefined) and optionally ``actions`` (the 18 actions'
counts); every numeric field is drawn. docs/baselines.md describes PPO's.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from saber.errors import TrainingLogError

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

UPDATES_FILE = "updates.jsonl"
NAMED = 6  # actions the figure's legend names (the palette's first colours)
#: ALE's names of the 18 actions, in their order.
ACTION_NAMES = (
    "NOOP", "FIRE", "UP", "RIGHT", "LEFT", "DOWN", "UPRIGHT", "UPLEFT", "DOWNRIGHT",
    "DOWNLEFT", "UPFIRE", "RIGHTFIRE", "LEFTFIRE", "DOWNFIRE", "UPRIGHTFIRE", "UPLEFTFIRE",
    "DOWNRIGHTFIRE", "DOWNLEFTFIRE",
)  # fmt: skip
#: Panel titles of the diagnostics ``examples/ppo_saber.py`` logs; others use their key.
TITLES = {
    "entropy": "policy entropy (nats)",
    "approx_kl": "approximate KL (nats)",
    "clip_fraction": "clip fraction",
    "explained_variance": "explained variance",
    "value_loss": "value loss",
    "policy_loss": "policy loss",
    "grad_norm": "gradient norm (before clipping)",
    "learning_rate": "learning rate",
}
READS = (
    "updates.jsonl holds one JSON object per update, with 'update', 'frames' and numeric "
    "diagnostics"
)


@dataclass(frozen=True)
class UpdateDiagnostics:
    """A training's diagnostics, one row per update.

    Attributes:
        frames: training frames at each update's end, shape (updates,).
        series: each diagnostic's values by name, shape (updates,); NaN where undefined.
        actions: the share of each action in each update's rollout, shape (updates, 18),
            or None when the log has no action counts.
    """

    frames: np.ndarray
    series: dict[str, np.ndarray]
    actions: np.ndarray | None


def updates_beside(log: Path) -> Path | None:
    """The ``updates.jsonl`` beside a training log, if there is one."""
    path = Path(log).parent / UPDATES_FILE
    return path if path.is_file() else None


def read_updates(path: str | Path) -> UpdateDiagnostics:
    """The diagnostics of ``updates.jsonl``.

    Raises:
        TrainingLogError: a line that is not an update's object (naming file and line), or
            a file without any update.
    """
    path = Path(path)
    frames: list[int] = []
    values: dict[str, list[float]] = {}
    counts: list[list[int]] = []
    with path.open(encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            row = _update(line, f"{path}:{number}")
            for name in values.keys() - row.keys():  # a diagnostic this update lacks
                values[name].append(math.nan)
            for name, value in row.items():
                if name in ("update", "frames", "actions"):
                    continue
                values.setdefault(name, [math.nan] * len(frames)).append(value)
            frames.append(row["frames"])
            if "actions" in row:
                counts.append(row["actions"])
    if not frames:
        raise TrainingLogError(f"{path}: no update; {READS}")
    actions = None
    if counts and len(counts) == len(frames):
        totals = np.asarray(counts, dtype=np.float64)
        actions = totals / np.maximum(totals.sum(axis=1, keepdims=True), 1.0)
    return UpdateDiagnostics(
        np.asarray(frames, dtype=np.int64),
        {name: np.asarray(series, dtype=np.float64) for name, series in values.items()},
        actions,
    )


def _update(line: str, where: str) -> dict[str, Any]:
    """One line's object, its numbers checked (None read as NaN)."""
    try:
        row = json.loads(line)
    except (ValueError, RecursionError):
        row = None
    if not isinstance(row, dict) or not isinstance(row.get("frames"), int):
        raise TrainingLogError(f"{where}: not an update's line; {READS}")
    checked: dict[str, Any] = {"frames": row["frames"]}
    for name, value in row.items():
        if name == "actions":
            if not (
                isinstance(value, list)
                and len(value) == len(ACTION_NAMES)
                and all(isinstance(n, int) and n >= 0 for n in value)
            ):
                raise TrainingLogError(
                    f"{where}: 'actions' must be 18 counts (one per action), actually: "
                    f"{str(value)[:60]}"
                )
            checked["actions"] = value
        elif name not in ("frames", "update"):
            number = isinstance(value, (int, float)) and not isinstance(value, bool)
            if value is not None and not number:
                continue  # text fields (a trainer's own) are not drawn
            checked[name] = math.nan if value is None else float(value)
    return checked


def plot_diagnostics(diagnostics: UpdateDiagnostics, title: str) -> Figure:
    """One panel per diagnostic against training frames, two a row, then the actions'
    shares across the figure's width.

    Args:
        diagnostics: from :func:`read_updates`.
        title: the figure's title (the game and the agent), drawn literally.
    """
    from saber.reports.figures.style import PAGE_WIDTH, PALETTE, drawing, new_figure

    names = [n for n in TITLES if n in diagnostics.series]
    names += sorted(diagnostics.series.keys() - set(TITLES))
    rows = -(-len(names) // 2) + (diagnostics.actions is not None)
    millions = diagnostics.frames / 1e6
    with drawing():
        fig = new_figure(PAGE_WIDTH, 1.5 * rows + 0.4)
        grid = fig.add_gridspec(rows, 2)
        for index, name in enumerate(names):
            ax = fig.add_subplot(grid[index // 2, index % 2])
            ax.plot(millions, diagnostics.series[name], color=PALETTE[0], linewidth=0.7)
            _panel(ax, TITLES.get(name, name))
        if diagnostics.actions is not None:
            _draw_actions(fig.add_subplot(grid[rows - 1, :]), millions, diagnostics.actions)
        fig.suptitle(title, fontsize=8, parse_math=False)
    return fig


def _panel(ax: Axes, title: str) -> None:
    ax.set_title(title, fontsize=7, pad=3, parse_math=False)
    ax.set_xlabel("training frames (millions)", fontsize=6)
    ax.grid(alpha=0.25, linewidth=0.5)
    ax.tick_params(labelsize=6)


def _draw_actions(ax: Axes, millions: np.ndarray, shares: np.ndarray) -> None:
    """Each action's share of each update's steps, stacked, the most taken at the bottom;
    the legend names the :data:`NAMED` most taken (the rest in grey)."""
    from saber.reports.figures.style import PALETTE

    order = np.argsort(-shares.mean(axis=0), kind="stable")
    colours = [PALETTE[rank] if rank < NAMED else "0.8" for rank in range(len(order))]
    areas = ax.stackplot(millions, shares[:, order].T, colors=colours, linewidth=0)
    ax.legend(
        areas[:NAMED],
        [ACTION_NAMES[i] for i in order[:NAMED]],
        fontsize=5,
        ncols=NAMED,
        loc="lower center",
        bbox_to_anchor=(0.5, 1.12),
        frameon=False,
    )
    ax.set_ylim(0, 1)
    _panel(ax, "share of each action in the update's rollout")


def save_diagnostics_plot(
    diagnostics: UpdateDiagnostics,
    title: str,
    directory: Path,
    formats: Sequence[str],
    dpi: int,
) -> list[Path]:
    """Write ``training_diagnostics.<format>`` into ``directory``; the paths written."""
    from saber.reports.figures.files import figure_directory, save_figure

    directory = figure_directory(directory, formats)
    fig = plot_diagnostics(diagnostics, title)
    return [save_figure(fig, directory / f"training_diagnostics.{fmt}", dpi) for fmt in formats]
