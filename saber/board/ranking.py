"""Like for like: the board ranks entries on one set of games at a time, by the statistics
of :func:`saber.reports.make_report` over those games alone (docs/board.md, "Like for
like")."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from saber.board.cache import Cache, digest
from saber.board.entries import VERIFIED, Entry
from saber.board.parallel import run_all
from saber.games import game_sets as named_sets
from saber.reports import Report, make_report
from saber.reports.model import Section
from saber.scoring import ScoreTable

# The named sets the board ranks on (saber.games.game_sets' names), largest first.
NAMED_SETS = {"saber61": "the SABER paper's games", "atari57": "Atari-57", "atari5": "Atari-5"}
LIMIT = "saber"  # the ranking's time limit: SABER's own (unlimited, the 100-hour cap)


@dataclass(frozen=True)
class GameSet:
    """A set of games entries are compared on.

    Attributes:
        slug: its page's name (``saber61``, ``atari57``, ``atari5``, ``common``).
        title: for people.
        games: ale ids, alphabetical.
    """

    slug: str
    title: str
    games: tuple[str, ...]

    def words(self) -> str:
        """``Atari-5 (5 games)``: the set as a sentence names it."""
        count = len(self.games)
        return f"{self.title} ({count} game{'s' * (count != 1)})"


@dataclass(frozen=True)
class Ranking:
    """The ranking on one set of games.

    Attributes:
        game_set: the games.
        rows: (entry, its section over those games), best median first.
        lacking: entries left out, each with the games it lacks.
    """

    game_set: GameSet
    rows: tuple[tuple[Entry, Section], ...] = ()
    lacking: tuple[tuple[Entry, tuple[str, ...]], ...] = ()


def games_at_limit(entry: Entry) -> set[str]:
    assert entry.table is not None
    return {r.game for r in entry.table.records if r.time_limit == LIMIT}


def game_sets(entries: list[Entry]) -> list[GameSet]:
    """The sets of games the board ranks on, in order: the named sets, the games every
    ranked entry has, and the games every verified entry has (where verified runs cover
    fewer games than a published table, they are ranked on these)."""
    ranked = [e for e in entries if e.ranked]
    common = set.intersection(*(games_at_limit(e) for e in ranked)) if ranked else set()
    verified = [e for e in ranked if e.status == VERIFIED]
    covered = set.intersection(*(games_at_limit(e) for e in verified)) if verified else set()
    named = named_sets()
    sets = [
        *(
            GameSet(slug, title, tuple(sorted(g.ale_id for g in named[slug])))
            for slug, title in NAMED_SETS.items()
        ),
        GameSet("common", "the games every ranked entry has", tuple(sorted(common))),
    ]
    if covered and covered != common:
        sets.append(
            GameSet("verified", "the games every verified entry has", tuple(sorted(covered)))
        )
    return sets


class Reports:
    """Each entry's report, on all its games or on one set of them, computed once.

    Args:
        cache: where reports are kept (their JSON documents).
        resamples: bootstrap resamples per interval.
        seed: the bootstrap's seed.
    """

    def __init__(self, cache: Cache, resamples: int, seed: int = 0) -> None:
        self.cache, self.resamples, self.seed = cache, resamples, seed
        self.computed = 0
        self._memo: dict[str, Report] = {}

    def key(self, entry: Entry, games: tuple[str, ...] | None = None) -> str:
        """The cache key of the report of ``entry`` on ``games`` (None: all its games)."""
        # The label too: the report names the agent by it (board.json's name may change).
        return digest("report", entry.key, entry.label, games, self.resamples, self.seed)

    def _normal(self, entry: Entry, games: tuple[str, ...] | None) -> tuple[str, ...] | None:
        assert entry.table is not None
        if games is not None and set(games) == {r.game for r in entry.table.records}:
            return None  # the same games: the same report
        return games

    def _found(self, key: str) -> Report | None:
        """The report kept under ``key`` (in this build, or in the cache), or None."""
        if key in self._memo:
            return self._memo[key]
        found = self.cache.get("report", key)
        if found is None:
            return None
        try:
            report = Report.from_dict(found)
        except ValueError:
            return None  # another schema: computed again
        self._memo[key] = report
        return report

    def _table(self, entry: Entry, games: tuple[str, ...] | None) -> ScoreTable:
        assert entry.table is not None
        if games is None:
            return entry.table
        kept = set(games)  # a ranking's: its games at its time limit (a third of the work)
        return dataclasses.replace(
            entry.table,
            records=[r for r in entry.table.records if r.game in kept and r.time_limit == LIMIT],
        )

    def _keep(self, key: str, document: dict[str, Any]) -> Report:
        self.computed += 1
        self.cache.put("report", key, document)
        self._memo[key] = Report.from_dict(document)
        return self._memo[key]

    def of(self, entry: Entry, games: tuple[str, ...] | None = None) -> Report:
        """The report of ``entry`` (which has scores): on all its games at every time limit
        (``games`` None, or its own games), else on ``games`` at the ranking's limit."""
        games = self._normal(entry, games)
        key = self.key(entry, games)
        found = self._found(key)
        if found is not None:
            return found
        return self._keep(
            key, report_document(self._table(entry, games), self.seed, self.resamples)
        )

    def compute(
        self, wanted: list[tuple[Entry, tuple[str, ...] | None]], workers: int | None
    ) -> dict[int, str]:
        """Compute the reports ``wanted`` that are not kept yet, in worker processes.

        Returns:
            The entries (by ``id()``) whose report cannot be computed, and why.
        """
        jobs: dict[str, tuple[Entry, tuple[Any, ...]]] = {}
        for entry, games in wanted:
            games = self._normal(entry, games)
            key = self.key(entry, games)
            if key not in jobs and self._found(key) is None:
                jobs[key] = (entry, (self._table(entry, games), self.seed, self.resamples))
        results = run_all(report_document, [job for _, job in jobs.values()], workers)
        failed = {}
        for (key, (entry, _)), result in zip(jobs.items(), results, strict=True):
            if isinstance(result, BaseException):
                failed[id(entry)] = " ".join(str(result).split()) or type(result).__name__
            else:
                self._keep(key, result)
        return failed


def report_document(table: ScoreTable, seed: int, resamples: int) -> dict[str, Any]:
    """:func:`saber.reports.make_report`'s JSON document (what a worker process sends back)."""
    return make_report(table, seed=seed, n_resamples=resamples).to_dict()


def _median_key(section: Section) -> tuple[float, float]:
    wr = section.world_record
    if wr.median_infinite:
        return (0.0, -float("inf"))
    return (0.0 if wr.median is not None else 1.0, -(wr.median or 0.0))


def rank(entries: list[Entry], game_set: GameSet, reports: Reports) -> Ranking:
    """The ranking of the ranked entries on ``game_set`` (see the module docstring)."""
    if not game_set.games:
        return Ranking(game_set)
    rows, left_out = [], []
    for entry in entries:
        if not entry.ranked:
            continue
        lacking = tuple(sorted(set(game_set.games) - games_at_limit(entry)))
        if lacking:
            left_out.append((entry, lacking))
            continue
        rows.append((entry, reports.of(entry, game_set.games).agents[entry.label][LIMIT]))
    rows.sort(key=lambda row: _median_key(row[1]))
    return Ranking(game_set, tuple(rows), tuple(left_out))
