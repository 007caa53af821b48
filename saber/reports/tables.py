"""Rendering a report (the dict of :func:`saber.reports.build_report`) as JSON, CSV, Markdown.

Nothing is computed here: every number comes from the report.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from saber.games import get_game
from saber.scoring import CLASS_NAMES

__all__ = ["PER_GAME_COLUMNS", "to_csv", "to_json", "to_markdown"]

TIME_LIMIT_TITLES = {"5min": "5 minutes", "30min": "30 minutes", "saber": "SABER (unlimited)"}
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
)


def to_json(report: dict[str, Any]) -> str:
    """The report as indented JSON; refuses NaN and Infinity, which JSON does not have."""
    return json.dumps(report, indent=2, allow_nan=False) + "\n"


def to_csv(report: dict[str, Any]) -> str:
    """One row per agent, time limit and game: the per-game part of the report."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=PER_GAME_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for agent, sections in report["agents"].items():
        for time_limit, section in sections.items():
            for game, row in section["per_game"].items():
                writer.writerow({"agent": agent, "time_limit": time_limit, "game": game, **row})
    return out.getvalue()


def _pct(value: float | None, digits: int = 1) -> str:
    return "–" if value is None else f"{value:,.{digits}f}%"


def _score(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:,.1f}"


def _interval(ci: list[float | None]) -> str:
    low, high = ci
    return f"[{_pct(low)}, {'∞' if high is None and low is not None else _pct(high)}]"


def _median(block: dict[str, Any]) -> str:
    return "∞" if block["median_infinite"] else _pct(block["median"])


def _table(header: list[str], rows: list[list[str]], align: str) -> list[str]:
    lines = ["| " + " | ".join(header) + " |"]
    lines.append("|" + "|".join(":---" if a == "l" else "---:" for a in align) + "|")
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def _summary(report: dict[str, Any]) -> list[str]:
    header = ["Agent", "Time limit", "Games", "Median [95% CI]", "Mean [95% CI]", "IQM [95% CI]"]
    header += ["Infinite"]
    header += [name.capitalize() for name in reversed(CLASS_NAMES)]
    header += ["Human median", "Human mean", "Atari-5 estimate"]
    rows = []
    for agent, sections in report["agents"].items():
        for time_limit, s in sections.items():
            wr, human = s["world_record"], s["human"]
            rows.append(
                [
                    agent,
                    TIME_LIMIT_TITLES[time_limit],
                    str(wr["games"]),
                    f"{_median(wr)} {_interval(wr['median_ci'])}",
                    f"{_pct(wr['mean'])} {_interval(wr['mean_ci'])}",
                    f"{_pct(wr['iqm'])} {_interval(wr['iqm_ci'])}",
                    str(len(wr["infinite"])),
                    *(str(s["classes"][name]) for name in reversed(CLASS_NAMES)),
                    _median(human),
                    _pct(human["mean"]),
                    _pct(s["atari5"]["estimate"]),
                ]
            )
    return _table(header, rows, "llr" + "r" * (len(header) - 3))


# The note of each reason a game is left out (a block's "left_out_reasons" in the report).
_LEFT_OUT_NOTES = {
    "no SABER baseline": "no SABER baseline (not one of the 61 SABER games), left out of the "
    "world-record and human-normalized aggregates",
    "no world record": "no world record, left out of the world-record aggregates",
    "no human score": "no human score, left out of the human-normalized aggregates",
}


def _left_out_notes(report: dict[str, Any]) -> list[str]:
    notes: dict[str, set[str]] = {note: set() for note in _LEFT_OUT_NOTES.values()}
    infinite = "infinite gameplay, left out of the human-normalized mean"
    for sections in report["agents"].values():
        for s in sections.values():
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
    return [
        f"- {note[0].upper()}{note[1:]}: {', '.join(sorted(games))}."
        for note, games in notes.items()
        if games
    ]


def _per_game(report: dict[str, Any], time_limit: str) -> list[str]:
    agents = [a for a, sections in report["agents"].items() if time_limit in sections]
    games = sorted({g for a in agents for g in report["agents"][a][time_limit]["per_game"]})
    header = ["Game", "Random", "Human", "World record"] + [f"{a} (% of record)" for a in agents]
    rows = []
    for game in games:
        info = get_game(game)
        row = [
            info.env_name,
            _score(info.random),
            _score(info.human),
            _score(info.world_record),
        ]
        for agent in agents:
            cell = report["agents"][agent][time_limit]["per_game"].get(game)
            if cell is None:
                row.append("")
            elif cell["infinite"]:
                row.append(f"∞ {_score(cell['score'])}".rstrip(" –"))
            else:
                row.append(f"{_score(cell['score'])} ({_pct(cell['world_record_pct'])})")
        rows.append(row)
    return _table(header, rows, "l" + "r" * (len(header) - 1))


def _comparisons(report: dict[str, Any]) -> list[str]:
    lines = []
    for time_limit, comparison in report["comparisons"].items():
        lines += ["", f"### Comparisons, {TIME_LIMIT_TITLES[time_limit]}", ""]
        for pair in comparison["pairs"]:
            sig = pair["significant"]
            poi = pair["probability_of_improvement"]
            lines.append(
                f"- P({pair['x']} > {pair['y']}) = {'–' if poi is None else f'{poi:.3f}'}; "
                f"Welch t-tests (two-tailed, p < {sig['alpha']}): {pair['x']} better on "
                f"{sig['x_better']} games, {pair['y']} on {sig['y_better']}."
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
    class from superhuman to failing, then raw scores beside the reference scores.
    """
    lines = ["# SABER report", ""]
    if not report["saber_compliant"]:
        lines += [
            "> **Warning: not SABER-compliant.** These runs used settings that break the "
            "SABER protocol; their numbers are not SABER scores.",
            "",
        ]
    lines += [f"> {warning}" for warning in report["warnings"]]
    lines += ["", "Sources: " + ", ".join(f"`{s}`" for s in report["sources"]), ""]
    boot = report["bootstrap"]
    lines += [
        "## Summary",
        "",
        "World-record-normalized scores in percent (100% = the human world record); infinite "
        f"gameplay counts 200% in the mean. Intervals: {boot['confidence_pct']:g}% stratified "
        f"bootstrap over episodes ({boot['resamples']} resamples, seed {boot['seed']}). Classes: "
        "superhuman ≥ 100%, fair ≥ 50%, medium ≥ 10%, poor ≥ 1%, failing < 1%. Human: the "
        "beginner human of Mnih et al. (2015).",
        "",
        *_summary(report),
        "",
        *_left_out_notes(report),
        "- Atari-5: "
        + next(iter(next(iter(report["agents"].values())).values()))["atari5"]["caveat"],
        *_comparisons(report),
    ]
    for time_limit in report["time_limits"]:
        lines += ["", f"## Per-game scores, {TIME_LIMIT_TITLES[time_limit]}", ""]
        lines += _per_game(report, time_limit)
    return "\n".join(lines) + "\n"
