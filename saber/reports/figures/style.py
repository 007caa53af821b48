"""How every figure looks: a paper's widths, the palette, one style per agent, the legends.

:func:`require_matplotlib` says how to install the ``plots`` extra; :func:`drawing` applies
the figures' settings while a figure is drawn or saved (docs/reports.md).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from saber.errors import PlotsUnavailableError
from saber.protocol import limits
from saber.reports.model import Report, as_report
from saber.reports.tables import NOT_SABER_MARK

if TYPE_CHECKING:
    from matplotlib.figure import Figure

COLUMN_WIDTH = 3.3  # inches: one column of a two-column paper
PAGE_WIDTH = 6.9  # inches: both columns
FORMATS = ("png", "pdf", "svg")
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


def require_matplotlib() -> None:
    """Raise :class:`PlotsUnavailableError` (naming both install forms) without matplotlib.

    ``saber report --plots`` calls this before it writes anything.
    """
    try:
        import matplotlib.figure  # noqa: F401
    except ImportError as error:
        raise PlotsUnavailableError(INSTALL_HINT) from error


@contextlib.contextmanager
def drawing() -> Iterator[None]:
    """The figures' matplotlib settings, while drawing or saving one."""
    require_matplotlib()
    import matplotlib

    with matplotlib.rc_context(_RC):
        yield


def new_figure(width: float, height: float) -> Figure:
    """A figure of ``width`` x ``height`` inches, laid out by matplotlib (no pyplot state)."""
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


def _is_reference(report: Report, agent: str) -> bool:
    # A section names the shipped reference it comes from; "@" marks one in a score file.
    return is_reference(agent) or any(s.reference for s in report.agents[agent].values())


def agent_styles(report: Report | Mapping[str, Any]) -> dict[str, AgentStyle]:
    """Colour of every agent of the report: users' agents in palette order, references grey."""
    report = as_report(report)
    styles = {}
    users = [a for a in report.agents if not _is_reference(report, a)]
    references = [a for a in report.agents if _is_reference(report, a)]
    for i, agent in enumerate(users):
        styles[agent] = AgentStyle(
            PALETTE[i % len(PALETTE)], reference=False, symbol=MARKERS[i % len(MARKERS)]
        )
    deviations = report.deviations_by_agent()
    for i, agent in enumerate(references):
        styles[agent] = AgentStyle(
            REFERENCE_GREYS[i % len(REFERENCE_GREYS)],
            reference=True,
            symbol=MARKERS[i % len(MARKERS)],
            linestyle=REFERENCE_DASHES[i % len(REFERENCE_DASHES)],
            not_saber=agent in deviations,
        )
    return styles


def agents_drawn(report: Report, time_limit: str | None = None) -> list[str]:
    """Agents with scores at ``time_limit`` (any, if None): the user's first, references after."""
    agents = [a for a, s in report.agents.items() if time_limit is None or time_limit in s]
    return sorted(agents, key=lambda a: _is_reference(report, a))


def limit_title(report: Report, time_limit: str) -> str:
    """The time limit as a title says it, and whether the report is not SABER-compliant."""
    suffix = "" if report.saber_compliant else " (NOT SABER-compliant)"
    return f"{limits.time_limit(time_limit).title}{suffix}"


def legend_columns(labels: Sequence[str], width: float) -> int:
    """Entries per row of a legend ``width`` inches wide."""
    # As many entries per row as fit the figure's width (7 pt text: ~0.06 in a character,
    # plus the handle); a legend wider than its figure is cut off.
    entry = 0.06 * max(len(label) for label in labels) + 0.5
    return max(1, min(len(labels), int(width // entry)))


def legend_above(fig: Figure, handles: Sequence[Any], labels: Sequence[str]) -> None:
    """The legend above the axes, in as many columns as fit."""
    # Outside the axes: a legend placed "best" still covers data in a dense figure.
    if labels:
        ncol = legend_columns(labels, fig.get_figwidth())
        fig.legend(handles, labels, loc="outside upper center", ncol=ncol)


def agents_legend(
    fig: Figure, handles: Sequence[Any], agents: Sequence[str], styles: dict[str, AgentStyle]
) -> None:
    """The legend above the axes of one handle per agent, each labelled as its style says."""
    legend_above(fig, handles, [styles[a].label(a) for a in agents])


def legend_rows(agents: Sequence[str], width: float) -> int:
    """Rows of the agents' legend across ``width`` inches (room to leave above the axes)."""
    labels = [f"{a} (reference)" for a in agents] or [""]
    return math.ceil(len(agents) / legend_columns(labels, width))
