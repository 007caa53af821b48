"""The figures of intervals: the aggregates, the probability of improvement, the time limits.

As in Agarwal et al. (2021, rliable): one panel per metric, each agent a coloured bar
spanning its interval with a black tick at the estimate.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from saber.protocol import limits
from saber.reports.figures import style
from saber.reports.figures.axes import fit_percent_ticks, percent_y_ticks
from saber.reports.model import Interval, Report, Section, as_report

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

AGGREGATES = (
    ("median", "Median"),
    ("iqm", "IQM"),
    ("mean", "Mean"),
    ("optimality_gap", "Optimality gap"),
)


def has_intervals(section: Section) -> bool:
    """Whether the section has intervals (it resampled runs or episodes); one score per
    game, or a published table of means, leaves nothing to resample."""
    return section.resampled is not None


def _interval_of(section: Section, key: str) -> tuple[float | None, Interval]:
    """A statistic and its interval; None for one left out (``omitted``: it means nothing
    for the input, as the IQM of fewer than 4 entries, which is the mean)."""
    if key in section.omitted.get("world_record", {}):
        return None, (None, None)
    block = section.world_record
    return getattr(block, key), getattr(block, f"{key}_ci")


def _resampled_words(report: Report, time_limit: str | None = None) -> str:
    """What the drawn intervals resampled, for a caption."""
    units = {
        s.resampled
        for sections in report.agents.values()
        for limit, s in sections.items()
        if (time_limit is None or limit == time_limit) and has_intervals(s)
    }
    if units == {"runs", "episodes"}:  # the agents' labels say how many runs each has
        return "over runs, or for an agent with 1 run over its episodes (evaluation noise only)"
    words = {"runs": "over runs", "episodes": "over episodes (evaluation noise only)"}
    return " or ".join(words[u] for u in ("runs", "episodes") if u in units)


def _runs_label(agent: str, agent_style: style.AgentStyle, section: Section) -> str:
    """The agent's label with the runs its interval resampled: ``dqn (3 runs)``, ``ppo (1 run)``."""
    runs = len(section.runs)
    if agent_style.reference or section.resampled is None or not runs:
        return agent_style.label(agent)
    return f"{agent} ({runs} run{'s' if runs > 1 else ''})"


def _draw_no_value(
    ax: Axes, y: int, section: Section, key: str, agent_style: style.AgentStyle
) -> None:
    """Text where a statistic has no value: ∞ for an infinite median, else a dash."""
    infinite = key == "median" and section.world_record.median_infinite
    ax.text(
        0.5,
        y,
        "∞ (infinite games)" if infinite else "–",
        transform=ax.get_yaxis_transform(),
        ha="center",
        va="center",
        color=agent_style.color,
    )


def _draw_interval(
    ax: Axes, y: int, value: float, interval: Interval, agent_style: style.AgentStyle
) -> None:
    """A bar over the interval with a black tick at the estimate; an infinite upper end
    (infinite gameplay) is an arrow to ∞ from the estimate."""
    low, high = interval
    if high is None:  # the upper end is infinite gameplay: an open bar
        ax.annotate(
            "∞",
            (value, y),
            xytext=(6, 0),
            textcoords="offset points",
            va="center",
            arrowprops={"arrowstyle": "<-", "color": agent_style.color},
        )
        high = value
    ax.barh(
        y,
        high - low,
        left=low,
        height=0.6,
        color=agent_style.facecolor,
        edgecolor=agent_style.color,
        linewidth=0.8,
        alpha=0.8,
        hatch="////" if agent_style.reference else None,
    )
    ax.vlines(value, y - 0.3, y + 0.3, color="black", linewidth=1.2)


def _aggregate_panel(
    ax: Axes,
    key: str,
    title: str,
    sections: dict[str, Section],
    styles: dict[str, style.AgentStyle],
) -> tuple[bool, bool]:
    """One statistic's panel, a row per agent.

    Returns:
        Whether an agent has no interval (a hollow diamond), and whether the statistic is
        left out for an agent (``omitted``).
    """
    point_only = omitted = False
    for y, (agent, section) in enumerate(sections.items()):
        value, interval = _interval_of(section, key)
        if value is None:
            omitted |= key in section.omitted.get("world_record", {})
            _draw_no_value(ax, y, section, key, styles[agent])
        elif has_intervals(section) and interval[0] is not None:
            _draw_interval(ax, y, value, interval, styles[agent])
        else:
            point_only = True
            ax.plot(value, y, **styles[agent].marker("D"))
    ax.set_title(title)
    # Bars are "sticky" at their base: the panel would end exactly at the lowest
    # interval, drawing it on the spine. The margins apply on both sides instead.
    ax.use_sticky_edges = False
    if not ax.has_data():  # only text: a scale would suggest numbers that are not there
        ax.set_xticks([])
    ax.grid(axis="x", alpha=0.25, linewidth=0.5)
    ax.spines["left"].set_visible(False)
    ax.tick_params(axis="y", length=0)
    ax.margins(x=0.15)
    return point_only, omitted


def _aggregates_caption(
    report: Report, time_limit: str, point_only: bool, omitted: set[str]
) -> str:
    """Under the panels: the score, what the bars resampled, what a diamond and a dash mean."""
    over = _resampled_words(report, time_limit)
    notes = []
    if over:
        notes.append(
            f"bars: {report.bootstrap.confidence_pct:g}% stratified bootstrap intervals {over}"
        )
    if point_only:
        notes.append("◇ no interval (published means, or one score per game)")
    if omitted:
        notes.append(
            f"– {', '.join(sorted(omitted))} not shown: fewer than 4 (run, game) entries, "
            "it trims nothing and is the mean"
        )
    return "\n".join(
        [f"world-record-normalized score, {style.limit_title(report, time_limit)}", *notes]
    )


def plot_aggregates(report: Report | Mapping[str, Any], time_limit: str = "saber") -> Figure:
    """Median, IQM, mean and optimality gap (world-record-normalized) with their intervals.

    As in Agarwal et al. (2021): one panel per metric, one row per agent, a coloured bar
    over the interval and a black tick at the estimate; an agent without an interval
    (one score per game) is a hollow diamond. Two columns wide.
    """
    report = as_report(report)
    agents = style.agents_drawn(report, time_limit)
    styles = style.agent_styles(report)
    sections = {agent: report.agents[agent][time_limit] for agent in agents}
    with style.drawing():
        fig = style.new_figure(style.PAGE_WIDTH, 0.75 + 0.3 * len(agents))
        axes = fig.subplots(1, len(AGGREGATES), sharey=True)
        any_point_only = False
        omitted: set[str] = set()
        for ax, (key, title) in zip(axes, AGGREGATES, strict=True):
            point_only, left_out = _aggregate_panel(ax, key, title, sections, styles)
            any_point_only |= point_only
            if left_out:
                omitted.add(title)
        labels = [_runs_label(agent, styles[agent], sections[agent]) for agent in agents]
        axes[0].set_yticks(range(len(agents)), labels)
        axes[0].set_ylim(-0.6, len(agents) - 0.4)
        axes[0].invert_yaxis()
        caption = _aggregates_caption(report, time_limit, any_point_only, omitted)
        fig.supxlabel(caption, fontsize=7)
        for ax in axes:
            if ax.has_data():
                fit_percent_ticks(fig, ax)
    return fig


def plot_improvement(
    report: Report | Mapping[str, Any], time_limit: str = "saber"
) -> Figure | None:
    """Probability of improvement P(X > Y) for every pair of agents, as in Agarwal et al.
    (2021): one row per pair, X named on the left and Y on the right, the interval as a
    bar in X's colour (a hollow diamond without one), 0.5 (no difference) dashed.

    Pairs without an estimate (a published table of means has neither runs nor
    episodes; no game in common) are left out, and the caption counts them; the tables
    give the reasons. None when no pair has an estimate. One column wide and up.
    """
    report = as_report(report)
    comparison = report.comparisons.get(time_limit)
    every = comparison.pairs if comparison is not None else []
    pairs = [p for p in every if p.probability_of_improvement is not None]
    if not pairs:
        return None  # nothing to draw: the tables say why, not an empty figure
    styles = style.agent_styles(report)
    # Names on both sides: as wide as they need, from one column up to two.
    names = 0.055 * (max(len(p.x) for p in pairs) + max(len(p.y) for p in pairs))
    with style.drawing():
        fig = style.new_figure(
            min(max(style.COLUMN_WIDTH, names + 1.6), style.PAGE_WIDTH), 0.8 + 0.25 * len(pairs)
        )
        ax = fig.add_subplot()
        for row, pair in enumerate(pairs):
            value = pair.probability_of_improvement
            low, high = pair.probability_of_improvement_ci
            if low is not None and high is not None:
                ax.barh(
                    row, high - low, left=low, height=0.6, color=styles[pair.x].color, alpha=0.8
                )
                ax.vlines(value, row - 0.3, row + 0.3, color="black", linewidth=1.2)
            else:
                ax.plot(value, row, **styles[pair.x].marker("D"))
        ax.axvline(0.5, color="0.5", linewidth=0.6, linestyle="--", zorder=0)
        ax.set_xlim(0, 1)
        ax.set_ylim(-0.6, len(pairs) - 0.4)
        ax.invert_yaxis()
        ax.set_yticks(range(len(pairs)), [p.x for p in pairs])
        right = ax.secondary_yaxis("right")
        right.set_yticks(range(len(pairs)), [p.y for p in pairs])
        right.tick_params(length=0)
        right.spines["right"].set_visible(False)
        ax.tick_params(axis="y", length=0)
        ax.spines["left"].set_visible(False)
        units = {p.unit or "episodes" for p in pairs}
        words = " or ".join(f"{u} of X and Y" for u in sorted(units))
        left_out = len(every) - len(pairs)
        label = f"P(X > Y): X (left) beats Y (right), {words}"
        if left_out:
            pairs_word = "pair" if left_out == 1 else "pairs"
            label += f"\n{left_out} {pairs_word} without an estimate not shown (see the report)"
        ax.set_xlabel(label, wrap=True)  # within the canvas, however narrow the figure
        ax.set_title(f"Probability of improvement, {style.limit_title(report, time_limit)}")
        ax.grid(axis="x", alpha=0.25, linewidth=0.5)
    return fig


def _across_limits(
    sections: dict[str, Section], time_limits: Sequence[str], key: str, dodge: float
) -> tuple[list[float], list[float], list[list[float]]]:
    """One agent's statistic ``key`` at each time limit it has: x positions (dodged so
    that agents' intervals stand side by side), values, and error bars below and above
    (0 without an interval, or above an infinite upper end)."""
    xs, values, errors = [], [], [[], []]
    for t, limit in enumerate(time_limits):
        if limit not in sections or getattr(sections[limit].world_record, key) is None:
            continue
        value, (low, high) = _interval_of(sections[limit], key)
        measured = has_intervals(sections[limit]) and low is not None
        xs.append(t + dodge)
        values.append(value)
        errors[0].append(value - low if measured else 0.0)
        errors[1].append(high - value if measured and high is not None else 0.0)
    return xs, values, errors


def plot_time_limits(report: Report | Mapping[str, Any]) -> Figure | None:
    """Median and mean (world-record-normalized) at each time limit, one line per agent.

    None when the report has a single time limit: there is nothing to compare.
    """
    report = as_report(report)
    time_limits = report.time_limits
    if len(time_limits) < 2:
        return None
    agents = style.agents_drawn(report)
    styles = style.agent_styles(report)
    with style.drawing():
        fig = style.new_figure(
            style.PAGE_WIDTH, 2.2 + 0.15 * style.legend_rows(agents, style.PAGE_WIDTH)
        )
        axes = fig.subplots(1, 2)
        handles = []
        for ax, (key, title) in zip(
            axes, (("median", "Median"), ("mean", "Mean (infinite gameplay = 200%)")), strict=True
        ):
            for i, agent in enumerate(agents):
                agent_style = styles[agent]
                dodge = (i - (len(agents) - 1) / 2) * 0.06  # intervals side by side
                xs, values, errors = _across_limits(report.agents[agent], time_limits, key, dodge)
                marker = agent_style.marker()
                handle = ax.errorbar(
                    xs,
                    values,
                    yerr=errors,
                    color=agent_style.color,
                    linestyle=agent_style.linestyle,
                    capsize=2,
                    elinewidth=0.8,
                    **{k: v for k, v in marker.items() if k not in ("color", "linestyle")},
                )
                if ax is axes[0]:
                    handles.append(handle)
            ax.set_xticks(
                range(len(time_limits)), [limits.time_limit(t).title for t in time_limits]
            )
            ax.set_xlim(-0.4, len(time_limits) - 0.6)
            percent_y_ticks(ax)
            ax.set_ylabel("% of world record")
            ax.set_title(title)
            ax.grid(axis="y", alpha=0.25, linewidth=0.5)
        style.agents_legend(fig, handles, agents, styles)
        if not report.saber_compliant:
            fig.supxlabel("NOT SABER-compliant", fontsize=7)
    return fig
