"""The figures of scores: games per class, per-game scores, the score distribution."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from saber.games import get_game
from saber.reports.figures import style
from saber.reports.figures.axes import left_of, log_axis
from saber.reports.figures.intervals import has_intervals
from saber.reports.model import GameScore, Profile, Report, as_report
from saber.scoring.rules import CLASS_NAMES

if TYPE_CHECKING:
    from matplotlib.figure import Figure

CLASS_TICKS = (
    "failing\n< 1%",
    "poor\n1–10%",
    "medium\n10–50%",
    "fair\n50–100%",
    "superhuman\n≥ 100%",
)
SCORE_KEYS = {"world_record": "world_record_pct", "human": "human_pct"}  # GameScore's fields


def plot_classes(report: Report | Mapping[str, Any], time_limit: str = "saber") -> Figure:
    """Games per SABER class (world-record-normalized), agents side by side; one column wide."""
    report = as_report(report)
    agents = style.agents_drawn(report, time_limit)
    styles = style.agent_styles(report)
    with style.drawing():
        from matplotlib.ticker import MaxNLocator

        fig = style.new_figure(
            style.COLUMN_WIDTH, 2.2 + 0.15 * style.legend_rows(agents, style.COLUMN_WIDTH)
        )
        ax = fig.add_subplot()
        width = 0.8 / max(len(agents), 1)
        handles = []
        for i, agent in enumerate(agents):
            agent_style = styles[agent]
            counts = [report.agents[agent][time_limit].classes[c] for c in CLASS_NAMES]
            xs = [c + (i - (len(agents) - 1) / 2) * width for c in range(len(CLASS_NAMES))]
            bars = ax.bar(
                xs,
                counts,
                width,
                color=agent_style.facecolor,
                edgecolor=agent_style.color,
                linewidth=0.8,
                hatch="////" if agent_style.reference else None,
            )
            ax.bar_label(bars, fontsize=6, padding=1)
            handles.append(bars)
        ax.set_xticks(range(len(CLASS_NAMES)), list(CLASS_TICKS))
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.margins(y=0.12)  # room for the count above the tallest bar
        ax.set_ylabel("games")
        ax.set_title(f"Games per class, {style.limit_title(report, time_limit)}")
        style.agents_legend(fig, handles, agents, styles)
    return fig


def _games_with_scores(rows_of: dict[str, dict[str, GameScore]], key: str) -> list[str]:
    """Games of any agent with a ``key`` score or infinite gameplay, by title."""
    games = {
        game
        for rows in rows_of.values()
        for game, row in rows.items()
        if getattr(row, key) is not None or row.infinite
    }
    return sorted(games, key=lambda g: get_game(g).title)


def _finite_scores(tables: Iterable[Mapping[str, GameScore]], key: str) -> list[float]:
    """The finite ``key`` scores (percent) of per-game tables, in their order."""
    return [
        getattr(row, key)
        for rows in tables
        for row in rows.values()
        if getattr(row, key) is not None and not row.infinite
    ]


def plot_per_game(
    report: Report | Mapping[str, Any], time_limit: str = "saber", reference: str = "world_record"
) -> Figure:
    """Per-game normalized scores on a symmetric log scale, one marker per agent; infinite
    gameplay at ∞. One column wide, one row per game (titles as people write them)."""
    report = as_report(report)
    agents = style.agents_drawn(report, time_limit)
    styles = style.agent_styles(report)
    key = SCORE_KEYS[reference]
    rows_of = {a: report.agents[a][time_limit].per_game for a in agents}
    games = _games_with_scores(rows_of, key)
    finite = _finite_scores(rows_of.values(), key)
    with style.drawing():
        rows = style.legend_rows(agents, style.COLUMN_WIDTH)
        fig = style.new_figure(style.COLUMN_WIDTH, 0.9 + 0.15 * rows + 0.14 * len(games))
        ax = fig.add_subplot()
        infinite_x = 10 ** math.ceil(math.log10(max([100.0, *finite]) * 3))
        handles = []
        for i, agent in enumerate(agents):
            dodge = (i - (len(agents) - 1) / 2) * min(0.2, 0.6 / len(agents))
            xs, ys, inf_ys = [], [], []
            for row_index, game in enumerate(games):
                row = rows_of[agent].get(game)
                if row is None:
                    continue
                if row.infinite:
                    inf_ys.append(row_index + dodge)
                elif getattr(row, key) is not None:
                    xs.append(getattr(row, key))
                    ys.append(row_index + dodge)
            (handle,) = ax.plot(xs, ys, **styles[agent].marker())
            ax.plot([infinite_x] * len(inf_ys), inf_ys, **styles[agent].marker(">"))
            handles.append(handle)
        log_axis(ax, left_of(finite), infinite_x * 2, infinite_x)
        ax.axvline(100.0, color="0.5", linewidth=0.6, linestyle="--", zorder=0)
        ax.axvline(infinite_x, color="0.5", linewidth=0.5, linestyle=":", zorder=0)
        ax.set_yticks(range(len(games)), [get_game(g).title for g in games], fontsize=6.5)
        ax.set_ylim(-0.7, len(games) - 0.3)
        ax.invert_yaxis()
        ax.tick_params(axis="y", length=0)
        for row_index in range(len(games)):
            ax.axhline(row_index, color="0.92", linewidth=0.5, zorder=0)
        label = (
            "% of world record" if reference == "world_record" else "% of human (Mnih et al. 2015)"
        )
        ax.set_xlabel(f"{label}, symmetric log scale", wrap=True)
        ax.set_title(f"Per-game scores, {style.limit_title(report, time_limit)}", wrap=True)
        style.agents_legend(fig, handles, agents, styles)
    return fig


def _first_drop(profile: Profile) -> list[float]:
    """The threshold just below the first one where the profile leaves 1 (some entry is
    at or below it), so that an x-range starting there shows the whole drop."""
    pairs = zip(profile.thresholds_pct, profile.fraction_above, strict=True)
    below = None
    for threshold, fraction in pairs:
        if fraction is not None and fraction < 1.0:
            return [threshold if below is None else below]
        below = threshold
    return []


def _nan(values: Sequence[float | None]) -> list[float]:
    return [math.nan if v is None else v for v in values]


def _profile_steps(rows: dict[str, GameScore], left: float, right: float) -> tuple[list, list]:
    """The report's score distribution (fraction of games scoring above τ) as drawn steps.

    It is the per-game scores sorted: the fraction drops by 1/G at each game's score, so
    it is drawn from them, over any x-range (the report tabulates it from 0% up).
    Infinite games stay above every τ.
    """
    scores = sorted(_finite_scores([rows], "world_record_pct"))
    counted = len(scores) + sum(r.infinite for r in rows.values())
    xs, ys = [left], [1.0]
    for i, score in enumerate(scores):
        xs.append(score)
        ys.append(1.0 - (i + 1) / counted)
    xs.append(right)
    ys.append(ys[-1])
    return xs, ys


def _profile_range(report: Report, agents: Sequence[str], time_limit: str) -> tuple[float, float]:
    """The x-range of the score distribution: every agent's scores, a negative one too."""
    sections = [report.agents[a][time_limit] for a in agents]
    scores = _finite_scores([s.per_game for s in sections], "world_record_pct")
    for section in sections:  # several runs: single runs' entries can lie below the means
        if len(section.runs) > 1:
            scores += _first_drop(section.world_record.profile)
    return left_of(scores), max([100.0, *scores]) * 1.5


def plot_profile(report: Report | Mapping[str, Any], time_limit: str = "saber") -> Figure:
    """Score distribution (rliable's performance profile): the fraction of (run, game)
    entries with a world-record-normalized score above τ, with its band where the report
    has intervals, as in Agarwal et al. (2021).

    The x-range covers every agent's scores, a negative one too: an agent with one run
    (or a published table) is drawn from its per-game scores, which are its entries, so
    its curve is exact; with several runs the report's profile is drawn over its
    thresholds (-1000% to 1000%, 0% included), with the band, and the x-range starts
    where that curve leaves 1. One column wide.
    """
    report = as_report(report)
    agents = style.agents_drawn(report, time_limit)
    styles = style.agent_styles(report)
    left, right = _profile_range(report, agents, time_limit)
    with style.drawing():
        fig = style.new_figure(
            style.COLUMN_WIDTH, 2.2 + 0.15 * style.legend_rows(agents, style.COLUMN_WIDTH)
        )
        ax = fig.add_subplot()
        handles = []
        for agent in agents:
            agent_style = styles[agent]
            section = report.agents[agent][time_limit]
            profile = section.world_record.profile
            if len(section.runs) > 1:
                xs, ys = profile.thresholds_pct, _nan(profile.fraction_above)
            else:
                xs, ys = _profile_steps(section.per_game, left, right)
            (handle,) = ax.step(
                xs, ys, where="post", color=agent_style.color, linestyle=agent_style.linestyle
            )
            low, high = profile.fraction_above_low, profile.fraction_above_high
            if has_intervals(section) and low and high and None not in low + high:
                ax.fill_between(
                    profile.thresholds_pct,
                    low,
                    high,
                    step="post",
                    color=agent_style.color,
                    alpha=0.2,
                    linewidth=0,
                )
            handles.append(handle)
        log_axis(ax, left, right)
        ax.axvline(100.0, color="0.5", linewidth=0.6, linestyle=":", zorder=0)
        ax.set_ylim(-0.02, 1.02)
        ax.set_xlabel("score τ, % of world record (symmetric log scale)")
        ax.set_ylabel("fraction of games (× runs) above τ")
        ax.grid(alpha=0.25, linewidth=0.5)
        ax.set_title(f"Score distribution, {style.limit_title(report, time_limit)}")
        style.agents_legend(fig, handles, agents, styles)
    return fig
