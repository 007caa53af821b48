"""docs/reports.md documents every key of the JSON report."""

from __future__ import annotations

import re
from pathlib import Path

from saber.games import all_games
from saber.reports import make_report
from saber.scoring import merge_tables, read_scores, reference_table

DOCS = Path(__file__).parents[2] / "docs" / "reports.md"

# Two agents with two runs each (so P(X > Y) has an interval and the Welch tests run),
# one with a single run of episodes, plus the SABER paper's agents (means only).
SCORES = (
    "agent,run,game,episode,score\n"
    + "".join(
        f"{agent},s{run},{game},{episode},{base + 5 * run + episode}\n"
        for agent, base in (("dqn", 10), ("ppo", 0))
        for run in range(2)
        for game in ("pong", "venture", "battle_zone", "double_dunk")
        for episode in range(2)
    )
    + "one,a,pong,0,3\none,a,pong,1,4\none,a,venture,0,0\none,a,venture,1,100\n"
)


def keys(value: object) -> set[str]:
    """Every key of every object in a JSON document."""
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in keys(v)}
    return set()


def test_every_key_of_the_json_is_documented(tmp_path):
    (tmp_path / "s.csv").write_text(SCORES)
    table = merge_tables([read_scores(tmp_path / "s.csv"), reference_table("saber-paper")])
    report = make_report(table, n_resamples=10).to_dict()
    (dqn_ppo,) = (
        pair
        for pair in report["comparisons"]["saber"]["pairs"]
        if (pair["x"], pair["y"]) == ("dqn", "ppo")
    )
    assert dqn_ppo["welch"]["pong"] is not None
    # Names chosen by the data, not by the format: agents, games, runs.
    data = set(report["agents"]) | {g.ale_id for g in all_games()} | {"s0", "s1", "a", "paper"}
    assert sorted(keys(report) - data - documented_names()) == []


def documented_names() -> set[str]:
    """The words inside code spans and code blocks of docs/reports.md."""
    text = DOCS.read_text(encoding="utf-8")
    blocks = re.findall(r"```.*?```", text, flags=re.DOTALL)
    spans = re.findall(r"`([^`\n]+)`", re.sub(r"```.*?```", " ", text, flags=re.DOTALL))
    return set(re.findall(r"[A-Za-z0-9_]+", " ".join(blocks + spans)))
