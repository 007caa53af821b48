"""Figures of a report (the dict of :func:`saber.reports.build_report`), for a paper.

matplotlib is the optional ``plots`` extra, imported when a figure is drawn. Figures are
built with ``matplotlib.figure.Figure`` (no pyplot state, no display needed). Nothing is
computed here: every number comes from the report; this module only lays it out.

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

import contextlib
import itertools
import math
import textwrap
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from saber.errors import SaberError
from saber.games import get_game
from saber.protocol import limits
from saber.reports.tables import NOT_SABER_MARK, deviations_by_agent
from saber.scoring import CLASS_NAMES

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "COLUMN_WIDTH",
    "FORMATS",
    "PAGE_WIDTH",
    "PlotsUnavailableError",
    "agent_styles",
    "figure_bytes",
    "figure_directory",
    "figure_paths",
    "plot_aggregates",
    "plot_classes",
    "plot_improvement",
    "plot_per_game",
    "plot_profile",
    "plot_time_limits",
    "report_figures",
    "require_matplotlib",
    "save_figure",
    "save_figures",
    "save_plots",
]

COLUMN_WIDTH = 3.3  # inches: one column of a two-column paper
PAGE_WIDTH = 6.9  # inches: both columns
FORMATS = ("png", "pdf", "svg")
AGGREGATES = (
    ("median", "Median"),
    ("iqm", "IQM"),
    ("mean", "Mean"),
    ("optimality_gap", "Optimality gap"),
)
# Okabe and Ito (2008), colour-blind safe; yellow left out: it vanishes on white paper.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000")
REFERENCE_GREYS = ("#555555", "#999999", "#333333", "#BBBBBB")
# A marker and dash per agent as well, so agents stay apart in greyscale print.
MARKERS = ("o", "s", "^", "D", "v", "P", "X")
REFERENCE_DASHES = ("--", ":", "-.", (0, (5, 1, 1, 1, 1, 1)))
INSTALL_HINT = (
    'Plots need matplotlib: pip install "saber-ale[plots]", or from a checkout of saber, '
    'pip install ".[plots]"'
)
_RC = {
    "font.size": 8,
    "axes.titlesize": 8,
    "axes.labelsize": 8,
    "xtick.labelsize": 7,
    "ytick.labelsize": 7,
    "legend.fontsize": 7,
    "legend.frameon": False,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.linewidth": 0.6,
    "xtick.major.width": 0.6,
    "ytick.major.width": 0.6,
    "lines.linewidth": 1.4,
    "lines.markersize": 4.5,
    "svg.fonttype": "none",  # text stays text in SVG
    "svg.hashsalt": "saber",  # fixed element ids: the same report gives the same SVG
    "pdf.fonttype": 42,  # TrueType in PDF: journals refuse Type 3 fonts
}


class PlotsUnavailableError(SaberError, ImportError):
    """matplotlib is not installed."""


def require_matplotlib() -> None:
    """Raise :class:`PlotsUnavailableError` (naming both install forms) without matplotlib.

    ``saber report --plots`` calls this before it writes anything.
    """
    try:
        import matplotlib.figure  # noqa: F401
    except ImportError as error:
        raise PlotsUnavailableError(INSTALL_HINT) from error


@contextlib.contextmanager
def _style() -> Iterator[None]:
    require_matplotlib()
    import matplotlib

    with matplotlib.rc_context(_RC):
        yield


def _figure(width: float, height: float) -> Figure:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def is_reference(agent: str) -> bool:
    """Whether an agent is a shipped reference (``name@source``), not a run of the user's."""
    return "@" in agent


@dataclass(frozen=True)
class AgentStyle:
    """How one agent is drawn, the same in every figure."""

    color: str
    reference: bool
    symbol: str = "o"
    linestyle: Any = "-"
    not_saber: bool = False  # a reference whose runs broke the protocol (Dopamine's)

    @property
    def facecolor(self) -> str:
        return "white" if self.reference else self.color

    def label(self, agent: str) -> str:
        if self.not_saber:
            return f"{agent} (reference, not SABER {NOT_SABER_MARK})"
        return f"{agent} (reference)" if self.reference else agent

    def marker(self, marker: str | None = None) -> dict[str, Any]:
        return {
            "marker": marker or self.symbol,
            "color": self.color,
            "markerfacecolor": self.facecolor,
            "markeredgecolor": self.color,
            "linestyle": "none",
        }


def _is_reference(report: dict[str, Any], agent: str) -> bool:
    # A section names the shipped reference it comes from; "@" marks one in a score file.
    sections = report["agents"][agent].values()
    return is_reference(agent) or any(s.get("reference") for s in sections)


def agent_styles(report: dict[str, Any]) -> dict[str, AgentStyle]:
    """Colour of every agent of the report: users' agents in palette order, references grey."""
    styles = {}
    users = [a for a in report["agents"] if not _is_reference(report, a)]
    references = [a for a in report["agents"] if _is_reference(report, a)]
    for i, agent in enumerate(users):
        styles[agent] = AgentStyle(
            PALETTE[i % len(PALETTE)], reference=False, symbol=MARKERS[i % len(MARKERS)]
        )
    deviations = deviations_by_agent(report)
    for i, agent in enumerate(references):
        styles[agent] = AgentStyle(
            REFERENCE_GREYS[i % len(REFERENCE_GREYS)],
            reference=True,
            symbol=MARKERS[i % len(MARKERS)],
            linestyle=REFERENCE_DASHES[i % len(REFERENCE_DASHES)],
            not_saber=agent in deviations,
        )
    return styles


def _agents(report: dict[str, Any], time_limit: str | None = None) -> list[str]:
    """Agents with scores at ``time_limit`` (any, if None): the user's first, references after."""
    agents = [a for a, s in report["agents"].items() if time_limit is None or time_limit in s]
    return sorted(agents, key=lambda a: _is_reference(report, a))


def _limit_title(report: dict[str, Any], time_limit: str) -> str:
    suffix = "" if report["saber_compliant"] else " (NOT SABER-compliant)"
    return f"{limits.time_limit(time_limit).title}{suffix}"


def _legend_columns(labels: Sequence[str], width: float) -> int:
    # As many entries per row as fit the figure's width (7 pt text: ~0.06 in a character,
    # plus the handle); a legend wider than its figure is cut off.
    entry = 0.06 * max(len(label) for label in labels) + 0.5
    return max(1, min(len(labels), int(width // entry)))


def _legend_above(fig: Figure, handles: Sequence[Any], labels: Sequence[str]) -> None:
    # Outside the axes: a legend placed "best" still covers data in a dense figure.
    if labels:
        ncol = _legend_columns(labels, fig.get_figwidth())
        fig.legend(handles, labels, loc="outside upper center", ncol=ncol)


def _legend_rows(agents: Sequence[str], width: float) -> int:
    labels = [f"{a} (reference)" for a in agents] or [""]
    return math.ceil(len(agents) / _legend_columns(labels, width))


def plot_classes(report: dict[str, Any], time_limit: str = "saber") -> Figure:
    """Games per SABER class (world-record-normalized), agents side by side; one column wide."""
    agents = _agents(report, time_limit)
    styles = agent_styles(report)
    with _style():
        from matplotlib.ticker import MaxNLocator

        fig = _figure(COLUMN_WIDTH, 2.2 + 0.15 * _legend_rows(agents, COLUMN_WIDTH))
        ax = fig.add_subplot()
        width = 0.8 / max(len(agents), 1)
        handles = []
        for i, agent in enumerate(agents):
            style = styles[agent]
            counts = [report["agents"][agent][time_limit]["classes"][c] for c in CLASS_NAMES]
            xs = [c + (i - (len(agents) - 1) / 2) * width for c in range(len(CLASS_NAMES))]
            bars = ax.bar(
                xs,
                counts,
                width,
                color=style.facecolor,
                edgecolor=style.color,
                linewidth=0.8,
                hatch="////" if style.reference else None,
            )
            ax.bar_label(bars, fontsize=6, padding=1)
            handles.append(bars)
        ax.set_xticks(
            range(len(CLASS_NAMES)),
            [
                "failing\n< 1%",
                "poor\n1–10%",
                "medium\n10–50%",
                "fair\n50–100%",
                "superhuman\n≥ 100%",
            ],
        )
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.margins(y=0.12)  # room for the count above the tallest bar
        ax.set_ylabel("games")
        ax.set_title(f"Games per class, {_limit_title(report, time_limit)}")
        _legend_above(fig, handles, [styles[a].label(a) for a in agents])
    return fig


def _log_axis(ax: Axes, low: float, high: float, infinite_x: float | None = None) -> None:
    """Symmetric log x-axis from ``low`` to ``high`` percent, ticks at 0 and every decade.

    symlog, because normalized scores can be 0 or negative: linear within ±1%, log beyond.
    With ``infinite_x``, a tick there labelled ∞ (infinite gameplay).
    """
    ax.set_xscale("symlog", linthresh=1.0, linscale=1.0)
    from matplotlib.ticker import FixedLocator

    decades = [10.0**k for k in range(0, 7)]
    ticks = sorted(t for t in {0.0, *decades, *(-d for d in decades)} if low <= t <= high)
    ax.xaxis.set_minor_locator(FixedLocator(ticks))
    if len(ticks) > 6:  # labels of every decade would run into each other: every other one
        ticks = [t for t in ticks if t == 0 or round(math.log10(abs(t))) % 2 == 0]
    labels = [f"{t:g}%" for t in ticks]
    if infinite_x is not None:
        ticks.append(infinite_x)
        labels.append("∞")
    ax.set_xticks(ticks, labels)
    ax.set_xlim(low, high)


def _percent_ticks(ax: Axes) -> None:
    from matplotlib.ticker import FuncFormatter

    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}%"))


def plot_per_game(
    report: dict[str, Any], time_limit: str = "saber", reference: str = "world_record"
) -> Figure:
    """Per-game normalized scores on a symmetric log scale, one marker per agent; infinite
    gameplay at ∞. One column wide, one row per game (titles as people write them)."""
    agents = _agents(report, time_limit)
    styles = agent_styles(report)
    key = {"world_record": "world_record_pct", "human": "human_pct"}[reference]
    rows_of = {a: report["agents"][a][time_limit]["per_game"] for a in agents}
    games = sorted(
        {
            g
            for rows in rows_of.values()
            for g, row in rows.items()
            if row[key] is not None or row["infinite"]
        },
        key=lambda g: get_game(g).title,
    )
    finite = [
        row[key]
        for rows in rows_of.values()
        for row in rows.values()
        if row[key] is not None and not row["infinite"]
    ]
    with _style():
        rows = _legend_rows(agents, COLUMN_WIDTH)
        fig = _figure(COLUMN_WIDTH, 0.9 + 0.15 * rows + 0.14 * len(games))
        ax = fig.add_subplot()
        infinite_x = 10 ** math.ceil(math.log10(max([100.0, *finite]) * 3))
        handles = []
        for i, agent in enumerate(agents):
            style = styles[agent]
            dodge = (i - (len(agents) - 1) / 2) * min(0.2, 0.6 / len(agents))
            xs, ys, inf_ys = [], [], []
            for row_index, game in enumerate(games):
                row = rows_of[agent].get(game)
                if row is None:
                    continue
                if row["infinite"]:
                    inf_ys.append(row_index + dodge)
                elif row[key] is not None:
                    xs.append(row[key])
                    ys.append(row_index + dodge)
            (handle,) = ax.plot(xs, ys, **style.marker())
            ax.plot([infinite_x] * len(inf_ys), inf_ys, **style.marker(">"))
            handles.append(handle)
        _log_axis(ax, _left_of(finite), infinite_x * 2, infinite_x)
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
        ax.set_xlabel(f"{label}, symmetric log scale")
        ax.set_title(f"Per-game scores, {_limit_title(report, time_limit)}")
        _legend_above(fig, handles, [styles[a].label(a) for a in agents])
    return fig


def _left_of(scores: Sequence[float]) -> float:
    """Left end of a symlog axis: below 0% and every score, by a little."""
    low = min([0.0, *scores])
    return -0.5 if low > -1 else low * 1.5


def _first_drop(profile: dict[str, Any]) -> list[float]:
    """The threshold just below the first one where the profile leaves 1 (some entry is
    at or below it), so that an x-range starting there shows the whole drop."""
    pairs = zip(profile["thresholds_pct"], profile["fraction_above"], strict=True)
    below = None
    for threshold, fraction in pairs:
        if fraction is not None and fraction < 1.0:
            return [threshold if below is None else below]
        below = threshold
    return []


def _nan(values: Sequence[float | None]) -> list[float]:
    return [math.nan if v is None else v for v in values]


def _profile_steps(rows: dict[str, Any], left: float, right: float) -> tuple[list, list]:
    """The report's score distribution (fraction of games scoring above τ) as drawn steps.

    It is the per-game scores sorted: the fraction drops by 1/G at each game's score, so
    it is drawn from them, over any x-range (the report tabulates it from 0% up).
    Infinite games stay above every τ.
    """
    scores = sorted(
        r["world_record_pct"]
        for r in rows.values()
        if r["world_record_pct"] is not None and not r["infinite"]
    )
    counted = len(scores) + sum(r["infinite"] for r in rows.values())
    xs, ys = [left], [1.0]
    for i, score in enumerate(scores):
        xs.append(score)
        ys.append(1.0 - (i + 1) / counted)
    xs.append(right)
    ys.append(ys[-1])
    return xs, ys


def plot_profile(report: dict[str, Any], time_limit: str = "saber") -> Figure:
    """Score distribution (rliable's performance profile): the fraction of (run, game)
    entries with a world-record-normalized score above τ, with its band where the report
    has intervals, as in Agarwal et al. (2021).

    The x-range covers every agent's scores, a negative one too: an agent with one run
    (or a published table) is drawn from its per-game scores, which are its entries, so
    its curve is exact; with several runs the report's profile is drawn over its
    thresholds (-1000% to 1000%, 0% included), with the band, and the x-range starts
    where that curve leaves 1. One column wide.
    """
    agents = _agents(report, time_limit)
    styles = agent_styles(report)
    rows_of = {a: report["agents"][a][time_limit]["per_game"] for a in agents}
    scores = [
        r["world_record_pct"]
        for rows in rows_of.values()
        for r in rows.values()
        if r["world_record_pct"] is not None and not r["infinite"]
    ]
    for agent in agents:  # several runs: single runs' entries can lie below the means
        if len(report["agents"][agent][time_limit].get("runs") or []) > 1:
            scores += _first_drop(report["agents"][agent][time_limit]["world_record"]["profile"])
    left, right = _left_of(scores), max([100.0, *scores]) * 1.5
    with _style():
        fig = _figure(COLUMN_WIDTH, 2.2 + 0.15 * _legend_rows(agents, COLUMN_WIDTH))
        ax = fig.add_subplot()
        handles = []
        for agent in agents:
            style = styles[agent]
            section = report["agents"][agent][time_limit]
            profile = section["world_record"]["profile"]
            if len(section.get("runs") or []) > 1:
                xs, ys = profile["thresholds_pct"], _nan(profile["fraction_above"])
            else:
                xs, ys = _profile_steps(rows_of[agent], left, right)
            (handle,) = ax.step(xs, ys, where="post", color=style.color, linestyle=style.linestyle)
            low, high = profile.get("fraction_above_low"), profile.get("fraction_above_high")
            if _measured(section) and low and high and None not in low + high:
                ax.fill_between(
                    profile["thresholds_pct"],
                    low,
                    high,
                    step="post",
                    color=style.color,
                    alpha=0.2,
                    linewidth=0,
                )
            handles.append(handle)
        _log_axis(ax, left, right)
        ax.axvline(100.0, color="0.5", linewidth=0.6, linestyle=":", zorder=0)
        ax.set_ylim(-0.02, 1.02)
        ax.set_xlabel("score τ, % of world record (symmetric log scale)")
        ax.set_ylabel("fraction of games (× runs) above τ")
        ax.grid(alpha=0.25, linewidth=0.5)
        ax.set_title(f"Score distribution, {_limit_title(report, time_limit)}")
        _legend_above(fig, handles, [styles[a].label(a) for a in agents])
    return fig


def _interval_of(section: dict[str, Any], key: str) -> tuple[float | None, list[float | None]]:
    """A statistic and its interval; None for one left out (``omitted``: it means nothing
    for the input, as the IQM of fewer than 4 entries, which is the mean)."""
    block = section["world_record"]
    if key in section.get("omitted", {}).get("world_record", {}):
        return None, [None, None]
    return block[key], block[f"{key}_ci"]


def _measured(section: dict[str, Any]) -> bool:
    """Whether the section has intervals (it resampled runs or episodes); one score per
    game, or a published table of means, leaves nothing to resample."""
    if "resampled" in section:
        return section["resampled"] is not None
    return any(row["episodes"] > 1 for row in section["per_game"].values())


def _resampled_words(report: dict[str, Any], time_limit: str | None = None) -> str:
    """What the drawn intervals resampled, for a caption."""
    units = {
        s.get("resampled", "episodes")
        for sections in report["agents"].values()
        for limit, s in sections.items()
        if (time_limit is None or limit == time_limit) and _measured(s)
    }
    if units == {"runs", "episodes"}:  # the agents' labels say how many runs each has
        return "over runs, or for an agent with 1 run over its episodes (evaluation noise only)"
    words = {"runs": "over runs", "episodes": "over episodes (evaluation noise only)"}
    return " or ".join(words[u] for u in ("runs", "episodes") if u in units)


def _runs_label(agent: str, style: AgentStyle, section: dict[str, Any]) -> str:
    """The agent's label with the runs its interval resampled: ``dqn (3 runs)``, ``ppo (1 run)``."""
    runs = len(section.get("runs") or [])
    if style.reference or section.get("resampled") is None or not runs:
        return style.label(agent)
    return f"{agent} ({runs} run{'s' if runs > 1 else ''})"


def plot_aggregates(report: dict[str, Any], time_limit: str = "saber") -> Figure:
    """Median, IQM, mean and optimality gap (world-record-normalized) with their intervals.

    As in Agarwal et al. (2021): one panel per metric, one row per agent, a coloured bar
    over the interval and a black tick at the estimate; an agent without an interval
    (one score per game) is a hollow diamond. Two columns wide.
    """
    agents = _agents(report, time_limit)
    styles = agent_styles(report)
    with _style():
        fig = _figure(PAGE_WIDTH, 0.75 + 0.3 * len(agents))
        axes = fig.subplots(1, len(AGGREGATES), sharey=True)
        any_point_only = False
        omitted: set[str] = set()
        for ax, (key, title) in zip(axes, AGGREGATES, strict=True):
            for y, agent in enumerate(agents):
                section = report["agents"][agent][time_limit]
                style = styles[agent]
                value, (low, high) = _interval_of(section, key)
                if value is None:
                    if key in section.get("omitted", {}).get("world_record", {}):
                        omitted.add(title)
                    infinite = key == "median" and section["world_record"]["median_infinite"]
                    ax.text(
                        0.5,
                        y,
                        "∞ (infinite games)" if infinite else "–",
                        transform=ax.get_yaxis_transform(),
                        ha="center",
                        va="center",
                        color=style.color,
                    )
                    continue
                if _measured(section) and low is not None:
                    if high is None:  # the upper end is infinite gameplay: an open bar
                        ax.annotate(
                            "∞",
                            (value, y),
                            xytext=(6, 0),
                            textcoords="offset points",
                            va="center",
                            arrowprops={"arrowstyle": "<-", "color": style.color},
                        )
                        high = value
                    ax.barh(
                        y,
                        high - low,
                        left=low,
                        height=0.6,
                        color=style.facecolor,
                        edgecolor=style.color,
                        linewidth=0.8,
                        alpha=0.8,
                        hatch="////" if style.reference else None,
                    )
                    ax.vlines(value, y - 0.3, y + 0.3, color="black", linewidth=1.2)
                else:
                    any_point_only = True
                    ax.plot(value, y, **style.marker("D"))
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
        axes[0].set_yticks(
            range(len(agents)),
            [_runs_label(a, styles[a], report["agents"][a][time_limit]) for a in agents],
        )
        axes[0].set_ylim(-0.6, len(agents) - 0.4)
        axes[0].invert_yaxis()
        boot = report["bootstrap"]
        over = _resampled_words(report, time_limit)
        notes = [f"bars: {boot['confidence_pct']:g}% stratified bootstrap intervals {over}"]
        notes = notes if over else []
        if any_point_only:
            notes.append("◇ no interval (published means, or one score per game)")
        if omitted:
            notes.append(
                f"– {', '.join(sorted(omitted))} not shown: fewer than 4 (run, game) entries, "
                "it trims nothing and is the mean"
            )
        fig.supxlabel(
            "\n".join(
                [f"world-record-normalized score, {_limit_title(report, time_limit)}", *notes]
            ),
            fontsize=7,
        )
        for ax in axes:
            if ax.has_data():
                _fit_percent_ticks(fig, ax)
    return fig


def _fit_percent_ticks(fig: Figure, ax: Axes, most: int = 4, gap_px: float = 4.0) -> None:
    """Percent ticks on ``ax``'s x axis, as many as fit (up to ``most``) without labels
    touching: a narrow panel of a narrow range ("100%", "100.05%", "100.1%") gets fewer.

    Steps of 1, 2 or 5 (never 2.5, whose labels need one more decimal), and labels with
    the decimals that the tick spacing needs, the same for every tick of the panel.
    """
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    def label(value: float, _: int) -> str:
        locs = ax.xaxis.get_majorticklocs()
        step = min((abs(b - a) for a, b in itertools.pairwise(locs)), default=0.0)
        # 1e-9: a step of 0.1 computed as 0.0999... needs one decimal, not two.
        decimals = max(0, -math.floor(math.log10(step) + 1e-9)) if step > 0 else 0
        text = f"{value:.{decimals}f}"
        return f"{text.lstrip('-') if float(text) == 0 else text}%"  # no "-0.0%"

    ax.xaxis.set_major_formatter(FuncFormatter(label))
    for nbins in range(most, 0, -1):
        ax.xaxis.set_major_locator(MaxNLocator(nbins=nbins, steps=[1, 2, 5, 10]))
        fig.draw_without_rendering()
        low, high = sorted(ax.get_xlim())
        boxes = sorted(
            (
                text.get_window_extent()
                for text, loc in zip(ax.get_xticklabels(), ax.get_xticks(), strict=True)
                if low <= loc <= high and text.get_text()
            ),
            key=lambda box: box.x0,
        )
        if all(a.x1 + gap_px <= b.x0 for a, b in itertools.pairwise(boxes)):
            return


def plot_improvement(report: dict[str, Any], time_limit: str = "saber") -> Figure | None:
    """Probability of improvement P(X > Y) for every pair of agents, as in Agarwal et al.
    (2021): one row per pair, X named on the left and Y on the right, the interval as a
    bar in X's colour (a hollow diamond without one), 0.5 (no difference) dashed.

    Pairs without an estimate (a published table of means has neither runs nor
    episodes; no game in common) are left out, and the caption counts them; the tables
    give the reasons. None when no pair has an estimate. One column wide and up.
    """
    comparison = report["comparisons"].get(time_limit)
    every = comparison["pairs"] if comparison is not None else []
    pairs = [p for p in every if p["probability_of_improvement"] is not None]
    if not pairs:
        return None  # nothing to draw: the tables say why, not an empty figure
    styles = agent_styles(report)
    # Names on both sides: as wide as they need, from one column up to two.
    names = 0.055 * (max(len(p["x"]) for p in pairs) + max(len(p["y"]) for p in pairs))
    with _style():
        fig = _figure(min(max(COLUMN_WIDTH, names + 1.6), PAGE_WIDTH), 0.8 + 0.25 * len(pairs))
        ax = fig.add_subplot()
        for row, pair in enumerate(pairs):
            style = styles[pair["x"]]
            value = pair["probability_of_improvement"]
            low, high = pair.get("probability_of_improvement_ci") or (None, None)
            if low is not None and high is not None:
                ax.barh(row, high - low, left=low, height=0.6, color=style.color, alpha=0.8)
                ax.vlines(value, row - 0.3, row + 0.3, color="black", linewidth=1.2)
            else:
                ax.plot(value, row, **style.marker("D"))
        ax.axvline(0.5, color="0.5", linewidth=0.6, linestyle="--", zorder=0)
        ax.set_xlim(0, 1)
        ax.set_ylim(-0.6, len(pairs) - 0.4)
        ax.invert_yaxis()
        ax.set_yticks(range(len(pairs)), [p["x"] for p in pairs])
        right = ax.secondary_yaxis("right")
        right.set_yticks(range(len(pairs)), [p["y"] for p in pairs])
        right.tick_params(length=0)
        right.spines["right"].set_visible(False)
        ax.tick_params(axis="y", length=0)
        ax.spines["left"].set_visible(False)
        units = {p.get("unit") or "episodes" for p in pairs}
        words = " or ".join(f"{u} of X and Y" for u in sorted(units))
        left_out = len(every) - len(pairs)
        label = f"P(X > Y): X (left) beats Y (right), {words}"
        if left_out:
            label += f"\n{left_out} pair(s) without an estimate not shown (see the report)"
        ax.set_xlabel(label)
        ax.set_title(f"Probability of improvement, {_limit_title(report, time_limit)}")
        ax.grid(axis="x", alpha=0.25, linewidth=0.5)
    return fig


def plot_time_limits(report: dict[str, Any]) -> Figure | None:
    """Median and mean (world-record-normalized) at each time limit, one line per agent.

    None when the report has a single time limit: there is nothing to compare.
    """
    time_limits = report["time_limits"]
    if len(time_limits) < 2:
        return None
    agents = _agents(report)
    styles = agent_styles(report)
    with _style():
        fig = _figure(PAGE_WIDTH, 2.2 + 0.15 * _legend_rows(agents, PAGE_WIDTH))
        axes = fig.subplots(1, 2)
        handles = []
        for ax, (key, title) in zip(
            axes, (("median", "Median"), ("mean", "Mean (infinite gameplay = 200%)")), strict=True
        ):
            for i, agent in enumerate(agents):
                style = styles[agent]
                sections = report["agents"][agent]
                xs, values, errors = [], [], [[], []]
                dodge = (i - (len(agents) - 1) / 2) * 0.06  # intervals side by side
                for t, limit in enumerate(time_limits):
                    if limit not in sections or sections[limit]["world_record"][key] is None:
                        continue
                    value, (low, high) = _interval_of(sections[limit], key)
                    measured = _measured(sections[limit]) and low is not None
                    xs.append(t + dodge)
                    values.append(value)
                    errors[0].append(value - low if measured else 0.0)
                    errors[1].append(high - value if measured and high is not None else 0.0)
                handle = ax.errorbar(
                    xs,
                    values,
                    yerr=errors,
                    color=style.color,
                    linestyle=style.linestyle,
                    capsize=2,
                    elinewidth=0.8,
                    **{k: v for k, v in style.marker().items() if k not in ("color", "linestyle")},
                )
                if ax is axes[0]:
                    handles.append(handle)
            ax.set_xticks(
                range(len(time_limits)), [limits.time_limit(t).title for t in time_limits]
            )
            ax.set_xlim(-0.4, len(time_limits) - 0.6)
            _percent_ticks_y(ax)
            ax.set_ylabel("% of world record")
            ax.set_title(title)
            ax.grid(axis="y", alpha=0.25, linewidth=0.5)
        _legend_above(fig, handles, [styles[a].label(a) for a in agents])
        if not report["saber_compliant"]:
            fig.supxlabel("NOT SABER-compliant", fontsize=7)
    return fig


def _percent_ticks_y(ax: Axes) -> None:
    from matplotlib.ticker import FuncFormatter

    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:g}%"))


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
    report: dict[str, Any],
    directory: str | Path,
    formats: Sequence[str] = ("png",),
    dpi: int = 300,
) -> list[Path]:
    """Write every figure of the report into ``directory`` (created if needed).

    Args:
        report: from :func:`saber.reports.build_report`.
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


def report_figures(
    report: dict[str, Any], time_limits: Sequence[str] | None = None, across_limits: bool = True
) -> dict[str, Figure]:
    """Every figure of the report that its data can fill, by file name (no suffix).

    Args:
        report: from :func:`saber.reports.build_report`.
        time_limits: the limits to draw (default: all of the report's).
        across_limits: also the ``time_limits`` figure (when the report has several).

    Raises:
        PlotsUnavailableError: matplotlib is not installed.
    """
    require_matplotlib()
    figures: dict[str, Figure | None] = {}
    for limit in report["time_limits"] if time_limits is None else time_limits:
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


def _not_saber_note(fig: Figure, report: dict[str, Any]) -> None:
    """Say under the figure how its not-SABER references (‡) differ from SABER."""
    by_label: dict[str, list[str]] = {}
    for agent, label in deviations_by_agent(report).items():
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
        with _style():
            fig.supxlabel("\n".join(caption), fontsize=6)


def save_figure(fig: Figure, path: str | Path, dpi: int = 300) -> Path:
    """Write one figure; the format follows the suffix (``.png``, ``.pdf``, ``.svg``).

    PDF and SVG files carry no creation date, so the same report gives the same bytes.
    """
    from saber.protocol.rundir import writing_atomically

    path = Path(path)
    fmt = path.suffix.lstrip(".").lower()
    metadata = {"pdf": {"CreationDate": None}, "svg": {"Date": None}}.get(fmt, {})
    # Whole or absent: a full disk leaves no half figure under the name.
    with _style(), writing_atomically(path) as temporary:
        fig.savefig(temporary, format=fmt, dpi=dpi, metadata=metadata)
    return path


def figure_bytes(fig: Figure, fmt: str = "png", dpi: int = 200) -> bytes:
    """One figure as the bytes of a file (``png``, ``pdf`` or ``svg``), for a page to inline."""
    import io

    out = io.BytesIO()
    metadata = {"pdf": {"CreationDate": None}, "svg": {"Date": None}}.get(fmt, {})
    with _style():
        fig.savefig(out, format=fmt, dpi=dpi, metadata=metadata)
    return out.getvalue()
