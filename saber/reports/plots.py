"""Figures of a report (the dict of :func:`saber.reports.build_report`), with matplotlib.

matplotlib is the optional ``plots`` extra, imported when a figure is drawn. Figures are
built with ``matplotlib.figure.Figure`` (no pyplot state, no display needed). Nothing is
computed here: every number comes from the report.

Example:
    >>> from saber.reports.plots import save_plots           # doctest: +SKIP
    >>> save_plots(report, "figures/")                       # doctest: +SKIP
    [PosixPath('figures/classes_5min.png'), PosixPath('figures/per_game_5min.png'), ...]

One file per figure and time limit present (``classes_<limit>.png``, ``per_game_<limit>.png``,
``profile_<limit>.png``, ``aggregates_<limit>.png``, limits ``5min``, ``30min``, ``saber``),
and ``time_limits.png``.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from saber.errors import SaberError
from saber.scoring import CLASS_NAMES

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "PlotsUnavailableError",
    "plot_aggregates",
    "plot_classes",
    "plot_per_game",
    "plot_profile",
    "plot_time_limits",
    "save_plots",
]

TIME_LIMIT_LABELS = {"5min": "5 min", "30min": "30 min", "saber": "SABER"}
AGGREGATES = (
    ("median", "Median"),
    ("iqm", "IQM"),
    ("mean", "Mean"),
    ("optimality_gap", "Optimality gap"),
)


class PlotsUnavailableError(SaberError, ImportError):
    """matplotlib is not installed."""


def _figure(width: float, height: float) -> Figure:
    try:
        from matplotlib.figure import Figure
    except ImportError as error:
        raise PlotsUnavailableError(
            'Plots need matplotlib: pip install "saber-ale[plots]"'
        ) from error
    return Figure(figsize=(width, height), layout="constrained")


def _agents(report: dict[str, Any], time_limit: str) -> list[str]:
    return [a for a, sections in report["agents"].items() if time_limit in sections]


def _colors(n: int) -> list[Any]:
    from matplotlib import colormaps

    return [colormaps["tab10"](i % 10) for i in range(n)]


def _title(ax: Axes, text: str, report: dict[str, Any]) -> None:
    suffix = "" if report["saber_compliant"] else " (NOT SABER-compliant)"
    ax.set_title(text + suffix)


def plot_classes(report: dict[str, Any], time_limit: str = "saber") -> Figure:
    """Games per SABER class, agents side by side."""
    agents = _agents(report, time_limit)
    fig = _figure(7, 4)
    ax = fig.add_subplot()
    width = 0.8 / max(len(agents), 1)
    for i, (agent, color) in enumerate(zip(agents, _colors(len(agents)), strict=True)):
        counts = [report["agents"][agent][time_limit]["classes"][c] for c in CLASS_NAMES]
        xs = [c + (i - (len(agents) - 1) / 2) * width for c in range(len(CLASS_NAMES))]
        bars = ax.bar(xs, counts, width, label=agent, color=color)
        ax.bar_label(bars, fontsize=8)
    ax.set_xticks(
        range(len(CLASS_NAMES)),
        ["failing\n< 1%", "poor\n1–10%", "medium\n10–50%", "fair\n50–100%", "superhuman\n≥ 100%"],
    )
    ax.set_ylabel("games")
    ax.legend()
    _title(
        ax,
        f"Games per class of world-record-normalized score, {TIME_LIMIT_LABELS[time_limit]}",
        report,
    )
    return fig


def _log_axis(ax: Axes, axis: str = "x") -> None:
    # symlog: normalized scores can be 0 or negative; linear within ±1%, log beyond.
    getattr(ax, f"set_{axis}scale")("symlog", linthresh=1.0)


def plot_per_game(
    report: dict[str, Any], time_limit: str = "saber", reference: str = "world_record"
) -> Figure:
    """Per-game normalized scores on a log scale, one marker per agent; infinite games at ∞."""
    agents = _agents(report, time_limit)
    key = {"world_record": "world_record_pct", "human": "human_pct"}[reference]
    games = sorted(
        {
            g
            for a in agents
            for g, row in report["agents"][a][time_limit]["per_game"].items()
            if row[key] is not None or row["infinite"]
        }
    )
    fig = _figure(7, 1.2 + 0.22 * len(games))
    ax = fig.add_subplot()
    finite = [
        row[key]
        for a in agents
        for row in report["agents"][a][time_limit]["per_game"].values()
        if row[key] is not None and not row["infinite"]
    ]
    infinite_x = max([100.0, *finite]) * 3
    for i, (agent, color) in enumerate(zip(agents, _colors(len(agents)), strict=True)):
        rows = report["agents"][agent][time_limit]["per_game"]
        dodge = (i - (len(agents) - 1) / 2) * min(
            0.2, 0.6 / len(agents)
        )  # close scores stay visible
        for row_index, game in enumerate(games):
            row, y = rows.get(game), row_index + dodge
            if row is None:
                continue
            if row["infinite"]:
                ax.plot(infinite_x, y, marker=">", color=color, linestyle="none")
            elif row[key] is not None:
                ax.plot(row[key], y, marker="o", color=color, linestyle="none")
        ax.plot([], [], marker="o", color=color, linestyle="none", label=agent)
    _log_axis(ax)
    ax.axvline(100.0, color="gray", linewidth=0.8, linestyle="--")
    ax.axvline(infinite_x, color="gray", linewidth=0.5, linestyle=":")
    # Label the "infinite" column above the plot, where no marker can hide it.
    ax.text(infinite_x, 1.0, "∞", transform=ax.get_xaxis_transform(), va="bottom", ha="center")
    ax.set_yticks(range(len(games)), games, fontsize=8)
    ax.set_ylim(-0.7, len(games) - 0.3)
    ax.invert_yaxis()
    label = "% of world record" if reference == "world_record" else "% of human (Mnih et al. 2015)"
    ax.set_xlabel(f"{label} (symmetric log scale)")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)
    _title(ax, f"Per-game scores, {TIME_LIMIT_LABELS[time_limit]}", report)
    return fig


def plot_profile(report: dict[str, Any], time_limit: str = "saber") -> Figure:
    """Score distribution: fraction of games above each world-record-normalized score."""
    agents = _agents(report, time_limit)
    fig = _figure(7, 4)
    ax = fig.add_subplot()
    for agent, color in zip(agents, _colors(len(agents)), strict=True):
        profile = report["agents"][agent][time_limit]["world_record"]["profile"]
        ax.step(
            profile["thresholds_pct"],
            [math.nan if f is None else f for f in profile["fraction_above"]],
            where="post",
            color=color,
            label=agent,
        )
    _log_axis(ax)
    ax.axvline(100.0, color="gray", linewidth=0.8, linestyle="--")
    ax.set_xlim(0, 1000)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("world-record-normalized score τ, % (symmetric log scale)")
    ax.set_ylabel("fraction of games with score > τ")
    ax.grid(alpha=0.3)
    ax.legend()
    _title(ax, f"Score distribution, {TIME_LIMIT_LABELS[time_limit]}", report)
    return fig


def _error_bar(value: float | None, ci: list[float | None]) -> tuple[float, list[list[float]]]:
    if value is None:
        return math.nan, [[0.0], [0.0]]
    low = value if ci[0] is None else ci[0]
    high = value if ci[1] is None else ci[1]
    return value, [[value - low], [high - value]]


def plot_aggregates(report: dict[str, Any], time_limit: str = "saber") -> Figure:
    """Median, IQM, mean and optimality gap of world-record-normalized scores, with intervals."""
    agents = _agents(report, time_limit)
    fig = _figure(10, 1.2 + 0.45 * len(agents))
    axes = fig.subplots(1, len(AGGREGATES), sharey=True)
    colors = _colors(len(agents))
    for ax, (key, label) in zip(axes, AGGREGATES, strict=True):
        for y, (agent, color) in enumerate(zip(agents, colors, strict=True)):
            block = report["agents"][agent][time_limit]["world_record"]
            value, err = _error_bar(block[key], block[f"{key}_ci"])
            ax.errorbar(value, y, xerr=err, fmt="o", color=color, capsize=4)
        ax.set_title(label)
        ax.set_xlabel("% of record")
        ax.grid(axis="x", alpha=0.3)
    axes[0].set_yticks(range(len(agents)), agents)
    axes[0].set_ylim(-0.6, len(agents) - 0.4)
    axes[0].invert_yaxis()
    boot = report["bootstrap"]
    suffix = "" if report["saber_compliant"] else " (NOT SABER-compliant)"
    fig.suptitle(
        f"Aggregates, {TIME_LIMIT_LABELS[time_limit]}: {boot['confidence_pct']:g}% stratified "
        f"bootstrap intervals{suffix}"
    )
    return fig


def plot_time_limits(report: dict[str, Any]) -> Figure:
    """Median and mean world-record-normalized score at 5 min, 30 min and SABER, per agent."""
    time_limits = report["time_limits"]
    agents = list(report["agents"])
    fig = _figure(9, 4)
    axes = fig.subplots(1, 2)
    width = 0.8 / max(len(agents), 1)
    for ax, key in zip(axes, ("median", "mean"), strict=True):
        for i, (agent, color) in enumerate(zip(agents, _colors(len(agents)), strict=True)):
            sections = report["agents"][agent]
            xs, values, errors = [], [], [[], []]
            for t, limit in enumerate(time_limits):
                if limit not in sections:
                    continue
                block = sections[limit]["world_record"]
                value, err = _error_bar(block[key], block[f"{key}_ci"])
                xs.append(t + (i - (len(agents) - 1) / 2) * width)
                values.append(value)
                errors[0] += err[0]
                errors[1] += err[1]
            ax.bar(xs, values, width, yerr=errors, capsize=3, color=color, label=agent)
        ax.set_xticks(range(len(time_limits)), [TIME_LIMIT_LABELS[t] for t in time_limits])
        ax.set_ylabel("% of world record")
        ax.set_title(
            f"{key.capitalize()} (infinite gameplay = 200%)" if key == "mean" else "Median"
        )
        ax.grid(axis="y", alpha=0.3)
    axes[0].legend()
    suffix = "" if report["saber_compliant"] else " (NOT SABER-compliant)"
    fig.suptitle(f"5-minute, 30-minute and unlimited (SABER) time limits{suffix}")
    return fig


def save_plots(report: dict[str, Any], directory: str | Path, dpi: int = 120) -> list[Path]:
    """Write every figure of the report as PNG into ``directory`` (created if needed).

    Per-time-limit figures are written for each time limit present (``classes_saber.png``,
    ``per_game_5min.png``, ...); the time-limit comparison once.

    Returns:
        The paths written.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    figures: dict[str, Figure] = {}
    for limit in report["time_limits"]:
        figures[f"classes_{limit}"] = plot_classes(report, limit)
        figures[f"per_game_{limit}"] = plot_per_game(report, limit)
        figures[f"profile_{limit}"] = plot_profile(report, limit)
        figures[f"aggregates_{limit}"] = plot_aggregates(report, limit)
    figures["time_limits"] = plot_time_limits(report)
    paths = []
    for name, fig in figures.items():
        path = directory / f"{name}.png"
        fig.savefig(path, dpi=dpi)
        paths.append(path)
    return paths
