"""The report's comparisons as matrices: agents x agents at each time limit, with the notes.

Every number comes from the report; Markdown, HTML and LaTeX render the same cells
(docs/reports.md).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from saber.games import get_game
from saber.reports.model import Comparison, Pair, Report, ReportLike, as_report
from saber.reports.tables import Table, group_title, time_limit_groups

NONE = "–"  # a pair without a comparison: comparison_notes says why
SELF = ""  # an agent against itself
NO_SPREAD = "†"  # an estimate whose every resample is the same
ZERO_WIDTH_NOTE = (
    f"{NO_SPREAD} Every resample gave the same P (the two agents' scores do not overlap on "
    "any game, or are all equal): the bootstrap has no interval to show."
)

# What each unit of P(row > column) means, said once per report.
UNIT_NOTES = {
    "runs": (
        "P(row > column) over runs (rliable's probability of improvement): per game, the "
        "fraction of (row run, column run) pairs in which the row's run scores higher, ties "
        "counting one half, averaged over the games every agent compared has; its interval "
        "resamples each agent's runs within each game (stratified bootstrap)."
    ),
    "episodes": (
        "P(row > column) over episodes: an agent of the pair has a single run, so there is "
        "no spread over runs to compare; the same statistic compares each game's episodes "
        "(every run of an agent pooled), and its interval resamples episodes: it shows "
        "evaluation noise, not the variation between training runs."
    ),
}
MEAN_ONLY_NOTE = (
    "published per-game means only, with neither runs nor episodes: not in the matrices "
    "(the probability of improvement and the t-tests need scores per run or per episode)"
)


@dataclass
class ComparisonBlock:
    """What one group of identical time limits shows.

    Attributes:
        title: the group's title (``SABER (unlimited)``, ``5 minutes = 30 minutes``).
        limits: the group's time limits.
        improvement: the P(row > column) matrix of the agents with runs or episodes, or
            None with fewer than two of them.
        welch: the t-tests' matrix, or None when no pair had a game to test.
        lines: sentences under the matrices (the mean inter-algorithm scores).
    """

    title: str
    limits: list[str]
    improvement: Table | None
    welch: Table | None
    lines: list[str]


def _zero_width(pair: Pair) -> bool:
    low, high = pair.probability_of_improvement_ci
    return low is not None and low == high


def _interval(pair: Pair) -> str:
    low, high = pair.probability_of_improvement_ci
    if _zero_width(pair):
        return f" {NO_SPREAD}"  # not "[0.00, 0.00]": ZERO_WIDTH_NOTE says why
    return "" if low is None or high is None else f" [{low:.2f}, {high:.2f}]"


def _improvement_cell(pair: Pair, with_unit: bool) -> str:
    p = pair.probability_of_improvement
    if pair.skipped or p is None:
        return NONE
    return f"{p:.2f}{_interval(pair)}" + (f" ({pair.unit})" if with_unit else "")


def _welch_cell(pair: Pair) -> str:
    tested = sum(result is not None for result in pair.welch.values())
    if pair.skipped or not tested:
        return NONE
    return f"{pair.significant['x_better']} of {tested}"


def _matrix(
    comparison: Comparison, agents: list[str], corner: str, cell: Callable[[Pair], str]
) -> Table:
    rows = [
        [row] + [SELF if row == col else cell(comparison.pair(row, col)) for col in agents]
        for row in agents
    ]
    return Table([corner, *agents], rows, "l" + "r" * len(agents))


def _units(comparison: Comparison) -> set[str]:
    return {p.unit for p in comparison.pairs if p.unit and not p.skipped}


def comparison_blocks(report: ReportLike) -> list[ComparisonBlock]:
    """Per group of identical time limits with two agents or more: its matrices."""
    report = as_report(report)
    level = f"{report.bootstrap.confidence_pct:g}%"
    blocks = []
    for group in time_limit_groups(report):
        comparison = report.comparisons.get(group[0])
        if comparison is None:
            continue
        # Published means have no runs or episodes: out of the matrices (a note says so).
        agents = [a for a in comparison.agents if not report.agents[a][group[0]].mean_only]
        units = _units(comparison)
        over = f", over {next(iter(units))}" if len(units) == 1 else ""
        improvement = welch = None
        if len(agents) >= 2:
            improvement = _matrix(
                comparison,
                agents,
                f"P(row > column){over}, {level} interval",
                functools.partial(_improvement_cell, with_unit=len(units) > 1),
            )
        if len(agents) >= 2 and any(_welch_cell(p) != NONE for p in comparison.pairs):
            corner = "Games where the row is significantly higher (Welch)"
            welch = _matrix(comparison, agents, corner, _welch_cell)
        lines = []
        if "mean" not in comparison.omitted.get("inter_algorithm", {}):  # see the notes
            means = comparison.inter_algorithm.mean
            lines.append(
                "Mean inter-algorithm score (each game scaled to the agents' min..max): "
                + ", ".join(f"{a} {'–' if m is None else f'{m:.1f}%'}" for a, m in means.items())
                + "."
            )
        blocks.append(ComparisonBlock(group_title(group), group, improvement, welch, lines))
    return blocks


def _titles(games: list[str]) -> str:
    return ", ".join(sorted(get_game(g).title for g in games))


def _untested(report: Report, shown: dict[str, Comparison]) -> dict[str, set[str]]:
    """Games some tested pair could not t-test, by reason."""
    found: dict[str, set[str]] = {"one score on a side": set(), "infinite gameplay": set()}
    for limit, comparison in shown.items():
        for pair in comparison.pairs:
            for game, result in pair.welch.items():
                if result is None:
                    rows = [report.agents[a][limit].per_game[game] for a in (pair.x, pair.y)]
                    infinite = any(r.infinite for r in rows)
                    found["infinite gameplay" if infinite else "one score on a side"].add(game)
    return found


def comparison_notes(report: ReportLike) -> list[str]:
    """What the matrices' units, dashes and t-tests mean: each note once per report."""
    report = as_report(report)
    shown = {
        g[0]: report.comparisons[g[0]]
        for g in time_limit_groups(report)
        if g[0] in report.comparisons
    }
    if not shown:
        return []
    units = set().union(*(_units(c) for c in shown.values()))
    pairs = [p for c in shown.values() for p in c.pairs]
    lines = [UNIT_NOTES[unit] for unit in ("runs", "episodes") if unit in units]
    mean_only, others = set(), set()
    for limit, comparison in shown.items():
        for pair in comparison.pairs:
            published = [a for a in (pair.x, pair.y) if report.agents[a][limit].mean_only]
            mean_only.update(published)
            if pair.skipped and not published:
                others.add(pair.skipped)
    if mean_only:
        lines.append(f"{', '.join(sorted(mean_only))}: {MEAN_ONLY_NOTE}.")
    lines += [f"{NONE} {why}." for why in sorted(others)]
    if any(_zero_width(p) for p in pairs):
        lines.append(ZERO_WIDTH_NOTE)
    if any(p.welch for p in pairs):
        alpha = next(p.significant["alpha"] for p in pairs if p.welch)
        lines.append(
            f"Welch t-tests (two-tailed, p < {alpha:g}) per game, on the pair's unit: in how "
            "many of the games tested the row scores significantly higher than the column."
        )
        said = [f"{why}: {_titles(sorted(g))}" for why, g in _untested(report, shown).items() if g]
        if said:
            lines.append(f"Not t-tested ({'; '.join(said)}).")
    return lines
