"""Rendering a report (the dict of :func:`saber.reports.build_report`) as JSON, CSV, Markdown.

Nothing is computed here: every number comes from the report.
"""

from __future__ import annotations

import csv
import io
import json
import textwrap
from typing import Any

from saber.games import BASELINE_SOURCES, get_game
from saber.protocol import limits
from saber.scoring import CLASS_NAMES

__all__ = [
    "NOT_SABER_MARK",
    "PER_GAME_COLUMNS",
    "deviations_by_agent",
    "to_csv",
    "to_json",
    "to_markdown",
]

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


def deviations_by_agent(report: dict[str, Any]) -> dict[str, str]:
    """Agent -> how its runs differ from SABER, for the references that do (Dopamine's).

    Every table and figure prints it beside the agent, so nobody takes it for SABER.
    """
    labels = {r["name"]: r.get("deviations") for r in report.get("references") or []}
    found = {}
    for agent, sections in report["agents"].items():
        for section in sections.values():
            label = labels.get(section.get("reference"))
            if label:
                found[agent] = label
    return found


def _marked(agent: str, deviations: dict[str, str]) -> str:
    return f"{agent} {NOT_SABER_MARK}" if agent in deviations else agent


def to_json(report: dict[str, Any]) -> str:
    """The report as indented JSON; refuses NaN and Infinity, which JSON does not have."""
    return json.dumps(report, indent=2, allow_nan=False) + "\n"


def to_csv(report: dict[str, Any]) -> str:
    """One row per agent, time limit and game: the per-game part of the report."""
    out = io.StringIO()
    writer = csv.DictWriter(
        out, fieldnames=PER_GAME_COLUMNS, lineterminator="\n", extrasaction="ignore"
    )
    writer.writeheader()
    deviations = deviations_by_agent(report)
    for agent, sections in report["agents"].items():
        for time_limit, section in sections.items():
            for game, row in section["per_game"].items():
                writer.writerow(
                    {
                        "agent": agent,
                        "time_limit": time_limit,
                        "game": game,
                        **row,
                        "deviations": deviations.get(agent, ""),
                    }
                )
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


def _has_interval(section: dict[str, Any]) -> bool:
    """Whether the section has intervals: it resampled runs or episodes (``resampled``)."""
    return section.get("resampled") is not None


# What the intervals resampled (a section's "resampled"), in the words of the summary.
RESAMPLED_WORDS = {
    "runs": "over runs within each game (several training runs, as Agarwal et al. 2021)",
    "episodes": "over the episodes of a single run within each game (evaluation noise only, "
    "not the variation between training runs)",
}


def _resampled(report: dict[str, Any]) -> str:
    units = {
        s.get("resampled") for sections in report["agents"].values() for s in sections.values()
    }
    words = [f"{unit}: {RESAMPLED_WORDS[unit]}" for unit in ("runs", "episodes") if unit in units]
    return "; ".join(words) if words else "none"


def _runs_cell(section: dict[str, Any]) -> str:
    """Runs counted in the aggregates, and the incomplete ones left out."""
    counted = len(section.get("runs") or [])
    left_out = len(section.get("runs_incomplete") or {})
    return f"{counted} (+{left_out} incomplete)" if left_out else str(counted)


def _resampled_cell(section: dict[str, Any]) -> str:
    """What this row's intervals resampled, so that no row is mistaken for another's."""
    unit = section.get("resampled")
    return f"– {NO_INTERVAL}" if unit is None else unit


def _estimate(value: str, ci: list[float | None], measured: bool) -> str:
    if not measured:
        return f"{value} {NO_INTERVAL}"
    low, high = ci
    if low is None and high is None:
        return value
    return f"{value} [{_pct(low)}, {'∞' if high is None else _pct(high)}]"


def _median(block: dict[str, Any]) -> str:
    return "∞" if block["median_infinite"] else _pct(block["median"])


def _table(header: list[str], rows: list[list[str]], align: str) -> list[str]:
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


def _atari5_cell(atari5: dict[str, Any]) -> str:
    if atari5["estimate"] is not None:
        return _pct(atari5["estimate"])
    missing = atari5["missing"]
    if not missing:
        return "–"
    if len(missing) > 2:  # the note under the table names them
        return "needs all 5 games" if len(missing) == 5 else f"needs {len(missing)} of 5 games"
    return "needs " + " and ".join(get_game(g).title for g in missing)


def _summary(report: dict[str, Any]) -> list[str]:
    """Two tables, so each fits a terminal: world-record aggregates, then classes, the
    human-normalized aggregates and Atari-5."""
    ci = f"[{report['bootstrap']['confidence_pct']:g}% CI]"
    header = ["Agent", "Time limit", "Games", f"Median {ci}", f"IQM {ci}", f"Mean {ci}"]
    header += ["Infinite", "Runs", "CI over"]
    classes = ["Agent", "Time limit", *(name.capitalize() for name in reversed(CLASS_NAMES))]
    classes += ["Human-normalized median", "Human-normalized mean", "Atari-5 estimate"]
    rows, class_rows = [], []
    deviations = deviations_by_agent(report)
    for agent, sections in report["agents"].items():
        for time_limit, s in sections.items():
            wr, human = s["world_record"], s["human"]
            measured = _has_interval(s)
            rows.append(
                [
                    _marked(agent, deviations),
                    limits.time_limit(time_limit).title,
                    str(wr["games"]),
                    _estimate(_median(wr), wr["median_ci"], measured),
                    _estimate(_pct(wr["iqm"]), wr["iqm_ci"], measured),
                    _estimate(_pct(wr["mean"]), wr["mean_ci"], measured),
                    str(len(wr["infinite"])),
                    _runs_cell(s),
                    _resampled_cell(s),
                ]
            )
            class_rows.append(
                [
                    _marked(agent, deviations),
                    limits.time_limit(time_limit).title,
                    *(str(s["classes"][name]) for name in reversed(CLASS_NAMES)),
                    _median(human),
                    _pct(human["mean"]),
                    _atari5_cell(s["atari5"]),
                ]
            )
    return [
        *_table(header, rows, "llr" + "r" * (len(header) - 3)),
        "",
        *_table(classes, class_rows, "ll" + "r" * (len(classes) - 2)),
    ]


# The note of each reason a game is left out (a block's "left_out_reasons" in the report).
_LEFT_OUT_NOTES = {
    "no SABER baseline": "no SABER baseline (not one of the 61 SABER games), left out of the "
    "world-record and human-normalized aggregates",
    "no world record": "no world record, left out of the world-record aggregates",
    "no human score": "no human score, left out of the human-normalized aggregates",
}


def _notes(report: dict[str, Any]) -> list[str]:
    notes: dict[str, set[str]] = {note: set() for note in _LEFT_OUT_NOTES.values()}
    infinite = "infinite gameplay, left out of the human-normalized mean"
    atari5: dict[str, list[str]] = {}
    no_interval: dict[str, list[str]] = {}  # why (a section's interval_note) -> who
    for agent, sections in report["agents"].items():
        for time_limit, s in sections.items():
            if not _has_interval(s):
                why = s.get("interval_note") or NO_INTERVAL_NOTE.split(": ", 1)[1]
                no_interval.setdefault(why, []).append(
                    f"{agent}, {limits.time_limit(time_limit).title}"
                )
            for block, missing in (
                ("world_record", "no world record"),
                ("human", "no human score"),
            ):
                reasons = s[block].get("left_out_reasons", {})
                for game in s[block]["left_out"]:
                    reason = reasons.get(game, missing)
                    note = _LEFT_OUT_NOTES.get(reason, f"{reason}, left out of the aggregates")
                    notes.setdefault(note, set()).add(game)
            notes.setdefault(infinite, set()).update(s["human"]["left_out_of_mean"])
            if s["atari5"]["estimate"] is None and s["atari5"]["missing"]:
                needs = f"needs {_titles(s['atari5']['missing'])}"
                atari5.setdefault(needs, []).append(
                    f"{agent}, {limits.time_limit(time_limit).title}"
                )
    lines = [
        f"{NO_INTERVAL} No interval ({'; '.join(who)}): {why}." for why, who in no_interval.items()
    ]
    lines += [
        f"{note[0].upper()}{note[1:]}: {_titles(list(games))}."
        for note, games in notes.items()
        if games
    ]
    lines += [
        f"Atari-5 estimate empty ({'; '.join(who)}): {needs}." for needs, who in atari5.items()
    ]
    caveat = next(iter(next(iter(report["agents"].values())).values()))["atari5"]["caveat"]
    lines.append(f"Atari-5: {caveat}")
    by_label: dict[str, list[str]] = {}
    for agent, label in deviations_by_agent(report).items():
        by_label.setdefault(label, []).append(agent)
    lines += [
        f"{NOT_SABER_MARK} {', '.join(agents)}: {label}." for label, agents in by_label.items()
    ]
    return [f"- {line}" for line in lines]


def _sources(report: dict[str, Any]) -> list[str]:
    references = [
        f"- {r['name']}: {r['citation']}." for r in report.get("references") or [] if r["citation"]
    ]
    return [
        "Sources of the reference scores (cite these):",
        "",
        *(f"- {text}." for text in BASELINE_SOURCES.values()),
        "- Median, IQM, mean, optimality gap, intervals and probability of improvement: "
        "Agarwal et al. 2021 (NeurIPS 34, arXiv:2108.13264); classes and the 200% rule for "
        "infinite gameplay: the SABER paper.",
        *references,
    ]


def _per_game(report: dict[str, Any], time_limit: str) -> list[str]:
    agents = [a for a, sections in report["agents"].items() if time_limit in sections]
    games = sorted(
        {g for a in agents for g in report["agents"][a][time_limit]["per_game"]},
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
            cell = report["agents"][agent][time_limit]["per_game"].get(game)
            if cell is None:
                row.append("not run")
            elif cell["infinite"]:
                row.append(f"∞ {_score(cell['score'])}".rstrip(" –"))
            elif cell["world_record_pct"] is None:
                why = "no record" if info.in_saber else "no SABER baseline"
                row.append(f"{_score(cell['score'])} ({why})")
            else:
                row.append(f"{_score(cell['score'])} ({_pct(cell['world_record_pct'])})")
        rows.append(row)
    return _table(header, rows, "l" + "r" * (len(header) - 1))


def _untested(report: dict[str, Any], time_limit: str, pair: dict[str, Any]) -> dict[str, list]:
    """Games of a pair without a Welch test, by reason (one episode, infinite gameplay)."""
    reasons: dict[str, list[str]] = {"one episode": [], "infinite gameplay": []}
    for game, result in pair["welch"].items():
        if result is not None:
            continue
        rows = [report["agents"][a][time_limit]["per_game"][game] for a in (pair["x"], pair["y"])]
        reason = "infinite gameplay" if any(r["infinite"] for r in rows) else "one episode"
        reasons[reason].append(game)
    return reasons


def _welch_sentence(report: dict[str, Any], time_limit: str, pair: dict[str, Any]) -> str:
    sig = pair["significant"]
    tested = sum(result is not None for result in pair["welch"].values())
    reasons = _untested(report, time_limit, pair)
    if not tested:
        why = "one episode" if reasons["one episode"] else "infinite gameplay"
        if not pair["welch"]:
            why = "no game in common"
        return f"Welch t-tests: no test ({why})."
    sentence = (
        f"Welch t-tests (two-tailed, p < {sig['alpha']}) on {tested} of {len(pair['welch'])} "
        f"games: {pair['x']} better on {sig['x_better']}, {pair['y']} on {sig['y_better']}"
    )
    skipped = [f"{why}: {_titles(games)}" for why, games in reasons.items() if games]
    return sentence + (f"; no test ({'; '.join(skipped)})." if skipped else ".")


def _comparisons(report: dict[str, Any]) -> list[str]:
    lines = []
    for time_limit, comparison in report["comparisons"].items():
        lines += ["", f"### Comparisons, {limits.time_limit(time_limit).title}", ""]
        for pair in comparison["pairs"]:
            poi = pair["probability_of_improvement"]
            if pair.get("skipped") and comparison["games"]:
                lines.append(f"- P({pair['x']} > {pair['y']}): no comparison: {pair['skipped']}.")
                continue
            low, high = pair.get("probability_of_improvement_ci") or (None, None)
            ci = "" if low is None or high is None else f" [{low:.3f}, {high:.3f}]"
            unit = f" (over {pair['unit']})" if pair.get("unit") else ""
            lines.append(
                f"- P({pair['x']} > {pair['y']}) = {'–' if poi is None else f'{poi:.3f}'}{ci}"
                f"{unit}; " + _welch_sentence(report, time_limit, pair)
            )
        means = comparison["inter_algorithm"]["mean"]
        lines.append(
            "- Mean inter-algorithm score (each game scaled to the agents' min..max): "
            + ", ".join(f"{a} {_pct(m)}" for a, m in means.items())
            + "."
        )
    return lines


def to_markdown(report: dict[str, Any]) -> str:
    """The report as Markdown: the summary, then one per-game table per time limit.

    Laid out as the SABER paper: world-record-normalized median and mean, games per
    class from superhuman to failing, then raw scores beside the reference scores. The
    columns line up, so the same text reads in a terminal (``saber report DIR``).
    """
    lines = ["# SABER report", ""]
    if not report["saber_compliant"]:
        lines += [
            "> **Warning: not SABER-compliant.** These runs used settings that break the "
            "SABER protocol; their numbers are not SABER scores.",
            "",
        ]
    lines += [f"> {warning}" for warning in report["warnings"]]
    lines += [""] if report["warnings"] else []
    lines += ["Scores: " + ", ".join(f"`{s}`" for s in report["sources"]), ""]
    boot = report["bootstrap"]
    intro = (
        "World-record-normalized scores in percent (100% = the human world record); infinite "
        f"gameplay counts 200% in the mean and IQM. Intervals: {boot['confidence_pct']:g}% "
        f"stratified bootstrap ({boot['resamples']} resamples, seed {boot['seed']}), resampling "
        f"{_resampled(report)} (column CI over). Classes: "
        "superhuman ≥ 100%, fair ≥ 50%, medium ≥ 10%, poor ≥ 1%, failing < 1%. "
        "Human-normalized: 100% = the beginner human of Mnih et al. (2015)."
    )
    lines += [
        "## Summary",
        "",
        textwrap.fill(intro, width=90),  # reads in a terminal; Markdown joins the lines
        "",
        *_summary(report),
        "",
        *_notes(report),
        *_comparisons(report),
    ]
    for time_limit in report["time_limits"]:
        lines += ["", f"## Per-game scores, {limits.time_limit(time_limit).title}", ""]
        lines += _per_game(report, time_limit)
    lines += ["", *_sources(report)]
    return "\n".join(lines) + "\n"
