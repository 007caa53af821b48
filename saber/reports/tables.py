"""Rendering a report as JSON, CSV, Markdown; the pieces that LaTeX and HTML share.

Every public function takes the typed report or its JSON document; nothing is computed here.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass

from saber.games import BASELINE_SOURCES, get_game
from saber.protocol import limits
from saber.reports.model import (
    Aggregates,
    Atari5,
    Interval,
    Report,
    ReportLike,
    Section,
    as_report,
)
from saber.scoring.rules import CLASS_NAMES

NOT_SABER_MARK = "‡"  # beside an agent whose runs broke the protocol (a reference's deviations)

PER_GAME_COLUMNS = (
    "agent",
    "time_limit",
    "game",
    "episodes",
    "score",
    "infinite",
    "world_record_pct",
    "human_pct",
    "human_average_pct",
    "class",
    "deviations",
)


def deviations_by_agent(report: ReportLike) -> dict[str, str]:
    """Agent -> how its runs differ from SABER, for the references that do (Dopamine's).

    Every table and figure prints it beside the agent, so nobody takes it for SABER.
    """
    return as_report(report).deviations_by_agent()


def time_limit_groups(report: ReportLike) -> list[list[str]]:
    """The report's time limits in groups of identical results, each printed once.

    A report of an older saber has no ``time_limit_groups``: each limit is its own group.
    """
    report = as_report(report)
    return report.time_limit_groups or [[limit] for limit in report.time_limits]


def group_title(group: list[str]) -> str:
    """``SABER (unlimited)``, or ``5 minutes = 30 minutes = SABER (unlimited)``."""
    return " = ".join(limits.time_limit(limit).title for limit in group)


@dataclass
class Table:
    """A table as cells of text: the header, the rows, and each column's alignment.

    Attributes:
        header: column names.
        rows: rows of cells, as long as the header.
        align: one letter per column, ``l`` or ``r``.
    """

    header: list[str]
    rows: list[list[str]]
    align: str


def _marked(agent: str, deviations: dict[str, str]) -> str:
    return f"{agent} {NOT_SABER_MARK}" if agent in deviations else agent


def to_json(report: ReportLike) -> str:
    """The report as indented JSON (:meth:`~saber.reports.model.Report.to_dict`): no NaN
    and no Infinity, which JSON does not have (``null`` stands for them)."""
    return json.dumps(as_report(report).to_dict(), indent=2, allow_nan=False) + "\n"


def to_csv(report: ReportLike) -> str:
    """One row per agent, time limit and game: the per-game part of the report."""
    report = as_report(report)
    out = io.StringIO()
    writer = csv.DictWriter(
        out, fieldnames=PER_GAME_COLUMNS, lineterminator="\n", extrasaction="ignore"
    )
    writer.writeheader()
    deviations = deviations_by_agent(report)
    for agent, sections in report.agents.items():
        for time_limit, section in sections.items():
            for game, row in section.per_game.items():
                cells = {**vars(row), "class": row.class_, "deviations": deviations.get(agent, "")}
                writer.writerow({"agent": agent, "time_limit": time_limit, "game": game, **cells})
    return out.getvalue()


def _unsigned_zero(value: float, digits: int) -> float:
    # -0.04 rounds to "-0.0"; a zero has no sign in a table.
    return 0.0 if round(value, digits) == 0 else value


def _pct(value: float | None, digits: int = 1) -> str:
    return "–" if value is None else f"{_unsigned_zero(value, digits):,.{digits}f}%"


def _score(value: float | None) -> str:
    if value is None:
        return "–"
    if abs(value) >= 100:
        return f"{_unsigned_zero(value, 0):,.0f}"
    return f"{_unsigned_zero(value, 1):,.1f}"


NO_INTERVAL = "†"
NO_INTERVAL_NOTE = (
    f"{NO_INTERVAL} No interval: one score per game (a published table, or one episode "
    "each) leaves nothing to resample."
)


def _has_interval(section: Section) -> bool:
    """Whether the section has intervals: it resampled runs or episodes (``resampled``)."""
    return section.resampled is not None


# What the intervals resampled (a section's "resampled"), in the words of the summary.
RESAMPLED_WORDS = {
    "runs": "over runs within each game (several training runs, as Agarwal et al. 2021)",
    "episodes": "over the episodes of a single run within each game (evaluation noise only, "
    "not the variation between training runs)",
}


def _resampled(report: Report) -> str:
    units = {s.resampled for sections in report.agents.values() for s in sections.values()}
    words = [f"{unit}: {RESAMPLED_WORDS[unit]}" for unit in ("runs", "episodes") if unit in units]
    return "; ".join(words) if words else "none"


def _runs_cell(section: Section) -> str:
    """Runs counted in the aggregates, and the incomplete ones left out."""
    counted = len(section.runs)
    left_out = len(section.runs_incomplete)
    return f"{counted} (+{left_out} incomplete)" if left_out else str(counted)


def _resampled_cell(section: Section) -> str:
    """What this row's intervals resampled, so that no row is mistaken for another's."""
    unit = section.resampled
    return f"– {NO_INTERVAL}" if unit is None else unit


def _estimate(value: str, ci: Interval, measured: bool) -> str:
    if not measured:
        return f"{value} {NO_INTERVAL}"
    low, high = ci
    if low is None and high is None:
        return value
    return f"{value} [{_pct(low)}, {'∞' if high is None else _pct(high)}]"


def _median(block: Aggregates) -> str:
    return "∞" if block.median_infinite else _pct(block.median)


def markdown_table(header: list[str], rows: list[list[str]], align: str) -> list[str]:
    """A Markdown table whose columns line up, so it reads in a terminal as well."""
    widths = [max(len(cell) for cell in column) for column in zip(header, *rows, strict=True)]

    def line(cells: list[str]) -> str:
        padded = (
            cell.ljust(w) if a == "l" else cell.rjust(w)
            for cell, w, a in zip(cells, widths, align, strict=True)
        )
        return "| " + " | ".join(padded) + " |"

    rule = "|" + "|".join(
        ":" + "-" * (w + 1) if a == "l" else "-" * (w + 1) + ":"
        for w, a in zip(widths, align, strict=True)
    )
    return [line(header), rule + "|", *(line(row) for row in rows)]


def _titles(games: list[str]) -> str:
    return ", ".join(sorted(get_game(g).title for g in games))


def _atari5_cell(atari5: Atari5) -> str:
    if atari5.estimate is not None:
        return _pct(atari5.estimate)
    missing = atari5.missing
    if not missing:
        return "–"
    if len(missing) > 2:  # the note under the table names them
        return "needs all 5 games" if len(missing) == 5 else f"needs {len(missing)} of 5 games"
    return "needs " + " and ".join(get_game(g).title for g in missing)


def _iqm_cell(section: Section, block: str, measured: bool) -> str:
    if "iqm" in section.omitted.get(block, {}):
        return "–"  # the notes say why
    wr = section.block(block)
    return _estimate(_pct(wr.iqm), wr.iqm_ci, measured)


def summary_tables(report: ReportLike) -> list[Table]:
    """Two tables, so each fits a terminal: world-record aggregates, then classes, the
    human-normalized aggregates and Atari-5; one row per agent and group of identical
    time limits."""
    report = as_report(report)
    ci = f"[{report.bootstrap.confidence_pct:g}% CI]"
    header = ["Agent", "Time limit", "Games", f"Median {ci}", f"IQM {ci}", f"Mean {ci}"]
    header += ["Infinite", "Runs", "CI over"]
    classes = ["Agent", "Time limit", *(name.capitalize() for name in reversed(CLASS_NAMES))]
    classes += ["Human-normalized median", "Human-normalized mean", "Atari-5 estimate"]
    rows, class_rows = [], []
    deviations = deviations_by_agent(report)
    for agent, sections in report.agents.items():
        for group in time_limit_groups(report):
            if group[0] not in sections:
                continue
            s = sections[group[0]]
            wr, human = s.world_record, s.human
            measured = _has_interval(s)
            rows.append(
                [
                    _marked(agent, deviations),
                    group_title(group),
                    str(wr.games),
                    _estimate(_median(wr), wr.median_ci, measured),
                    _iqm_cell(s, "world_record", measured),
                    _estimate(_pct(wr.mean), wr.mean_ci, measured),
                    str(len(wr.infinite)),
                    _runs_cell(s),
                    _resampled_cell(s),
                ]
            )
            class_rows.append(
                [
                    _marked(agent, deviations),
                    group_title(group),
                    *(str(s.classes[name]) for name in reversed(CLASS_NAMES)),
                    _median(human),
                    _pct(human.mean),
                    _atari5_cell(s.atari5),
                ]
            )
    return [
        Table(header, rows, "llr" + "r" * (len(header) - 3)),
        Table(classes, class_rows, "ll" + "r" * (len(classes) - 2)),
    ]


# The note of each reason a game is left out (a block's "left_out_reasons" in the report).
_LEFT_OUT_NOTES = {
    "no SABER baseline": "no SABER baseline (not one of the 61 SABER games), left out of the "
    "world-record and human-normalized aggregates",
    "no world record": "no world record, left out of the world-record aggregates",
    "no human score": "no human score, left out of the human-normalized aggregates",
}


# The statistics a section or comparison may leave out (``omitted``), as the notes name them.
_OMITTED_NAMES = {
    "world_record.iqm": "IQM",
    "human.iqm": "Human-normalized IQM",
    "inter_algorithm.mean": "Mean inter-algorithm score",
}


def _listed(words: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return ", ".join(words[:-1]) + f" and {words[-1]}" if len(words) > 1 else words[0]


def _group_words(group: list[str]) -> str:
    return _listed([limits.time_limit(limit).title for limit in group])


def _who(report: Report, found: list[tuple[str | None, str]]) -> str:
    """Who a note is about, each agent once: ``(agent, group title)`` pairs (agent None: a
    comparison's group) as ``mine, SABER (unlimited); rainbow@saber-paper, every time
    limit``; an agent alone when the report is one group of several limits."""
    groups = time_limit_groups(report)
    titles: dict[str | None, list[str]] = {}
    for agent, title in found:
        titles.setdefault(agent, []).append(title)
    said = []
    for agent, where in titles.items():
        if agent is not None and len(groups) == 1 and len(groups[0]) > 1:
            said.append(agent)
        elif agent is not None and len(where) == len(groups) > 1:
            said.append(f"{agent}, every time limit")
        else:
            place = _listed(where)
            said.append(place if agent is None else f"{agent}, {place}")
    return "; ".join(said)


def _flat(omitted: dict[str, dict[str, str]]) -> dict[str, str]:
    """``{"world_record": {"iqm": why}}`` -> ``{"world_record.iqm": why}``."""
    return {f"{part}.{key}": why for part, keys in omitted.items() for key, why in keys.items()}


def _omitted(report: Report) -> list[str]:
    """One note per statistic and reason left out: who, and why."""
    found: dict[tuple[str, str], list[tuple[str | None, str]]] = {}
    for group in time_limit_groups(report):
        title = group_title(group)
        for agent, sections in report.agents.items():
            if group[0] in sections:
                for key, why in _flat(sections[group[0]].omitted).items():
                    found.setdefault((key, why), []).append((agent, title))
        comparison = report.comparisons.get(group[0])
        if comparison:
            for key, why in _flat(comparison.omitted).items():
                found.setdefault((key, why), []).append((None, title))
    return [
        f"{_OMITTED_NAMES.get(key, key)} not shown ({_who(report, who)}): {why}."
        for (key, why), who in found.items()
    ]


def notes(report: ReportLike, atari5: bool = True) -> list[str]:
    """The notes under the summary, one sentence or more each, in plain text.

    Args:
        atari5: include the notes on the Atari-5 estimate (the LaTeX tables have none).
    """
    report = as_report(report)
    lines = []
    for group in time_limit_groups(report):
        if len(group) > 1:
            lines.append(
                f"{_group_words(group)}: every score, and so every table, is the same at "
                f"these time limits (no episode scored after {limits.time_limit(group[0]).title}"
                f"): printed once."
            )
    lines += report.like_for_like.notes
    lines += _omitted(report)
    return lines + _left_out_notes(report, atari5)


def _left_out_notes(report: Report, with_atari5: bool) -> list[str]:
    notes: dict[str, set[str]] = {note: set() for note in _LEFT_OUT_NOTES.values()}
    infinite = "infinite gameplay, left out of the human-normalized mean"
    atari5: dict[str, list[tuple[str | None, str]]] = {}
    no_interval: dict[str, list[tuple[str | None, str]]] = {}  # why (interval_note) -> who
    for agent, sections in report.agents.items():
        for group in time_limit_groups(report):
            if group[0] not in sections:
                continue
            s, title = sections[group[0]], group_title(group)
            if not _has_interval(s):
                why = s.interval_note or NO_INTERVAL_NOTE.split(": ", 1)[1]
                no_interval.setdefault(why, []).append((agent, title))
            for block, missing in (
                (s.world_record, "no world record"),
                (s.human, "no human score"),
            ):
                for game in block.left_out:
                    reason = block.left_out_reasons.get(game, missing)
                    note = _LEFT_OUT_NOTES.get(reason, f"{reason}, left out of the aggregates")
                    notes.setdefault(note, set()).add(game)
            notes.setdefault(infinite, set()).update(s.human.left_out_of_mean)
            if s.atari5.estimate is None and s.atari5.missing:
                needs = f"needs {_titles(s.atari5.missing)}"
                atari5.setdefault(needs, []).append((agent, title))
    lines = [
        f"{NO_INTERVAL} No interval ({_who(report, who)}): {why}."
        for why, who in no_interval.items()
    ]
    lines += [
        f"{note[0].upper()}{note[1:]}: {_titles(list(games))}."
        for note, games in notes.items()
        if games
    ]
    if with_atari5:
        lines += [
            f"Atari-5 estimate empty ({_who(report, who)}): {needs}."
            for needs, who in atari5.items()
        ]
        caveat = next(iter(next(iter(report.agents.values())).values())).atari5.caveat
        lines.append(f"Atari-5: {caveat}")
    by_label: dict[str, list[str]] = {}
    for agent, label in deviations_by_agent(report).items():
        by_label.setdefault(label, []).append(agent)
    lines += [
        f"{NOT_SABER_MARK} {', '.join(agents)}: {label}." for label, agents in by_label.items()
    ]
    return lines


def source_lines(report: ReportLike) -> list[str]:
    """The sources to cite, one item each (after "Sources of the reference scores")."""
    references = [f"{r.name}: {r.citation}." for r in as_report(report).references if r.citation]
    return [
        *(f"{text}." for text in BASELINE_SOURCES.values()),
        "Median, IQM, mean, optimality gap, intervals and probability of improvement: "
        "Agarwal et al. 2021 (NeurIPS 34, arXiv:2108.13264); classes and the 200% rule for "
        "infinite gameplay: the SABER paper.",
        *references,
    ]


SOURCES_TITLE = "Sources of the reference scores (cite these):"


def per_game_tables(report: ReportLike) -> list[tuple[str, Table]]:
    """The per-game tables, one per group of identical time limits, each with its group's
    title: raw scores beside the Random, Human and World-record columns, each agent's cell
    with its world-record-normalized score: "21.0 (100.0%)", "∞", "not run"."""
    report = as_report(report)
    return [(group_title(g), _per_game_table(report, g[0])) for g in time_limit_groups(report)]


def _per_game_table(report: Report, time_limit: str) -> Table:
    agents = [a for a, sections in report.agents.items() if time_limit in sections]
    games = sorted(
        {g for a in agents for g in report.agents[a][time_limit].per_game},
        key=lambda g: get_game(g).title,
    )
    deviations = deviations_by_agent(report)
    header = ["Game", "Random", "Human", "World record"]
    header += [f"{_marked(a, deviations)} (% of record)" for a in agents]
    rows = []
    for game in games:
        info = get_game(game)
        row = [
            info.title,
            _score(info.random),
            _score(info.human),
            _score(info.world_record),
        ]
        for agent in agents:
            cell = report.agents[agent][time_limit].per_game.get(game)
            if cell is None:
                row.append("not run")
            elif cell.infinite:
                row.append(f"∞ {_score(cell.score)}".rstrip(" –"))
            elif cell.world_record_pct is None:
                why = "no record" if info.in_saber else "no SABER baseline"
                row.append(f"{_score(cell.score)} ({why})")
            else:
                row.append(f"{_score(cell.score)} ({_pct(cell.world_record_pct)})")
        rows.append(row)
    return Table(header, rows, "l" + "r" * (len(header) - 1))


def top_lines(report: ReportLike) -> tuple[str | None, list[str], list[str]]:
    """What comes before the summary: the not-SABER warning (None when compliant), the
    readers' warnings, and the files read."""
    report = as_report(report)
    warning = (
        None
        if report.saber_compliant
        else "Warning: not SABER-compliant. These runs used settings that break the SABER "
        "protocol; their numbers are not SABER scores."
    )
    return warning, list(report.warnings), list(report.sources)


def intro(report: ReportLike) -> str:
    """The paragraph that says what the numbers are and how the intervals were made."""
    report = as_report(report)
    boot = report.bootstrap
    return (
        "World-record-normalized scores in percent (100% = the human world record); infinite "
        f"gameplay counts 200% in the mean and IQM. Intervals: {boot.confidence_pct:g}% "
        f"stratified bootstrap ({boot.resamples} resamples, seed {boot.seed}), resampling "
        f"{_resampled(report)} (column CI over). Classes: "
        "superhuman ≥ 100%, fair ≥ 50%, medium ≥ 10%, poor ≥ 1%, failing < 1%. "
        "Human-normalized: 100% = the beginner human of Mnih et al. (2015)."
    )
