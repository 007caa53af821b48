"""Like for like: every aggregate set beside another covers the same games.

The references are restricted to the user's games, differing game sets are named, and
identical time limits are found so that a rendering prints them once (docs/reports.md).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from saber.games import get_game
from saber.protocol import limits
from saber.reports.model import Comparison, LikeForLike, Section
from saber.scoring import ScoreTable

LIST_AT_MOST = 8  # games named in a sentence; past that, only counted


def _games_words(games: Sequence[str]) -> str:
    """``Pong`` / ``Pong and Venture`` / ``57 games``: titles when there are few."""
    titles = sorted(get_game(g).title for g in games)
    if len(titles) > LIST_AT_MOST:
        return f"{len(titles)} games"
    if len(titles) <= 2:
        return " and ".join(titles)
    return ", ".join(titles[:-1]) + f" and {titles[-1]}"


def _games_by_limit(table: ScoreTable, agents: set[str]) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for r in table.records:
        if r.agent in agents:
            found.setdefault(r.time_limit, set()).add(r.game)
    return found


def restrict_references(table: ScoreTable) -> tuple[ScoreTable, LikeForLike]:
    """Keep only the references' scores on the games the user's agents have.

    At each time limit a reference keeps the games that the user's agents have there; at
    a limit none of them has (Dopamine's references are 30-minute scores, a CSV may have
    the unlimited ones only), the games they have at any limit, so that a reference asked
    for is never dropped whole. A table without a reference, or with references alone
    (``saber report --reference saber-paper``), is returned as it is.

    Returns:
        The restricted table, and what was done (``references_restricted``,
        ``reference_games``, ``references_left_out``, ``notes``).
    """
    references = set(table.references)
    users = {r.agent for r in table.records} - references
    if not references or not users:
        return table, LikeForLike()
    user_games = _games_by_limit(table, users)
    anywhere = set().union(*user_games.values())
    kept_games = {
        limit: user_games.get(limit, anywhere)
        for limit in {r.time_limit for r in table.records if r.agent in references}
    }
    records = [
        r for r in table.records if r.agent not in references or r.game in kept_games[r.time_limit]
    ]
    had = _games_by_agent(table.records, references)
    kept = _games_by_agent(records, references)
    order = table.agents()  # the report's order: names read in it
    had = {a: had[a] for a in order if a in had}
    left_out = {a: sorted(had[a] - kept.get(a, set())) for a in had}
    left_out = {a: games for a, games in left_out.items() if games}
    done = LikeForLike(
        references_restricted=True,
        reference_games={
            limit.name: sorted(kept_games[limit.name])
            for limit in limits.TIME_LIMITS
            if limit.name in kept_games
        },
        references_left_out=left_out,
    )
    if left_out:
        names = ", ".join(had)
        alone = " ".join(f"--reference {name}" for name in sorted(set(table.references.values())))
        sets = {tuple(g) for g in done.reference_games.values()}
        where = (
            _games_words(next(iter(sets)))
            if len(sets) == 1
            else "; ".join(
                f"at {limits.time_limit(limit).title}, {_games_words(games)}"
                for limit, games in done.reference_games.items()
            )
        )
        published = {len(had[a]) for a in had}
        over = f"the {published.pop()}" if len(published) == 1 else "all the"
        done.notes.append(
            f"References ({names}) are aggregated over the games your agents have ({where}), "
            f"not over {over} games they were published with, so that every aggregate "
            f"covers the same games; for their full-set numbers report them alone: "
            f"saber report {alone}."
        )
        absent = [a for a in had if a not in kept]
        if absent:
            done.notes.append(
                f"{', '.join(absent)}: none of your agents' games, so not in this report."
            )
    return dataclasses.replace(table, records=records), done


def _games_by_agent(records: Sequence[Any], agents: set[str]) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for r in records:
        if r.agent in agents:
            found.setdefault(r.agent, set()).add(r.game)
    return found


def differing_game_sets(
    agents: Mapping[str, Mapping[str, Section]], done: LikeForLike, time_limits: Sequence[str]
) -> LikeForLike:
    """Add the time limits where the agents' game sets differ, and the ``--games`` to choose.

    Args:
        agents: the report's sections, agent -> time limit -> section.
        done: what :func:`restrict_references` did; returned with ``differing``,
            ``common_games`` and their notes added.
        time_limits: the report's time limits, in order.
    """
    said: dict[str, list[str]] = {}  # what is not like for like -> the limits it holds at
    for limit in time_limits:
        sets = {a: set(s[limit].per_game) for a, s in agents.items() if limit in s}
        if len(sets) < 2 or len({frozenset(g) for g in sets.values()}) == 1:
            continue
        common = sorted(set.intersection(*sets.values()))
        done.differing[limit] = {a: len(g) for a, g in sets.items()}
        done.common_games[limit] = common
        counts = ", ".join(f"{a} {len(g)}" for a, g in sets.items())
        choose = (
            f"to compare them on the games they all have, choose those: --games {','.join(common)}"
            if common
            else "they have no game in common: compare them on games of your choice with --games"
        )
        what = f"the agents' aggregates cover different games ({counts}); {choose}"
        said.setdefault(what, []).append(limit)
    for what, where in said.items():  # once per report, with every limit it holds at
        titles = [limits.time_limit(limit).title for limit in where]
        at = ", ".join(titles[:-1]) + f" and {titles[-1]}" if len(titles) > 1 else titles[0]
        done.notes.append(f"Not like for like at {at}: {what}.")
    return done


def time_limit_groups(
    agents: Mapping[str, Mapping[str, Section]],
    comparisons: Mapping[str, Comparison],
    time_limits: Sequence[str],
) -> list[list[str]]:
    """Group the time limits whose sections and comparisons are identical, in order.

    For games whose episodes all end (or stop scoring) within 5 minutes, the 5-minute,
    30-minute and unlimited results are the same numbers; a rendering prints them once.
    Only neighbours are grouped (``5min`` with ``30min``, ``30min`` with ``saber``), so a
    group is a range of limits.
    Identical means equal dataclasses, intervals included (each section's bootstrap starts
    afresh from the same seed, so the same scores give the same intervals).
    """

    def content(limit: str) -> Any:
        return (
            {a: s[limit] for a, s in agents.items() if limit in s},
            comparisons.get(limit),
        )

    groups: list[list[str]] = []
    for limit in time_limits:
        if groups and content(groups[-1][-1]) == content(limit):
            groups[-1].append(limit)
        else:
            groups.append([limit])
    return groups
