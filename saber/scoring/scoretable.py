"""The score table: one tidy table of episode scores, whatever file they were read from.

Every reader builds it through one :class:`TableBuilder`, which refuses a score given twice.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from saber.errors import ScoreFileError, UnknownGameError
from saber.games import get_game
from saber.protocol import limits

DEFAULT_AGENT = "agent"
DEFAULT_RUN = "default"


@dataclass(frozen=True)
class EpisodeScore:
    """One score: an episode of one agent on one game at one time limit.

    Attributes:
        agent: the agent's name.
        game: ale id of the game.
        time_limit: one of :data:`saber.protocol.TIME_LIMITS`.
        score: raw game points; ``inf`` when infinite gameplay was given without a number.
        infinite: the episode was infinite gameplay (SABER limit only).
        episode: the episode index, or None when the file gave none.
        where: ``"file:line"``, for messages.
        run: the training run (seed) the episode belongs to.
    """

    agent: str
    game: str
    time_limit: str
    score: float
    infinite: bool
    episode: int | None
    where: str
    run: str = DEFAULT_RUN


@dataclass(frozen=True)
class GameEpisodes:
    """The episodes of one agent on one game at one time limit.

    Attributes:
        game: ale id.
        scores: raw episode scores, shape (n,); ``inf`` for an infinite episode without a
            number.
        infinite: any episode was infinite, so SABER counts the game as infinite.
    """

    game: str
    scores: NDArray
    infinite: bool

    @property
    def mean(self) -> float:
        """Mean raw score; ``inf`` if an episode has no finite score."""
        return float(np.mean(self.scores))


@dataclass
class ScoreTable:
    """Episode scores of one or more agents, with where they came from.

    Attributes:
        records: the rows: each file's in :func:`canonical_order`, files in the order read.
        sources: the files read.
        saber_compliant: False when a run declared non-SABER settings.
        warnings: things the reader skipped or noticed, for the report.
        mean_only: agents whose scores are published per-game means, not episodes (a
            paper's table): no intervals, no comparison that needs episodes.
        references: agent -> the name of the shipped reference it comes from.
        game_sets: (agent, run) -> (the game set the run was evaluated on, the file that
            says so), from harness ``run.json`` files.
        trained_outside_saber: agent -> how it was trained outside SABER (``"not SABER:
            trained with ..."``), for the shipped agents whose provenance says so
            (:func:`saber.agents.pretrained.training_deviations`).
    """

    records: list[EpisodeScore] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    saber_compliant: bool = True
    warnings: list[str] = field(default_factory=list)
    mean_only: set[str] = field(default_factory=set)
    references: dict[str, str] = field(default_factory=dict)
    game_sets: dict[tuple[str, str], tuple[frozenset[str], str]] = field(default_factory=dict)
    trained_outside_saber: dict[str, str] = field(default_factory=dict)

    def agents(self) -> list[str]:
        """Agent names in order of first appearance (the readers put each file's records
        in :func:`canonical_order`: files in the order given, agents alphabetical in each)."""
        return list(dict.fromkeys(r.agent for r in self.records))

    def time_limits(self) -> list[str]:
        """Time limits present, in :data:`saber.protocol.TIME_LIMITS` order."""
        present = {r.time_limit for r in self.records}
        return [limit.name for limit in limits.TIME_LIMITS if limit.name in present]

    def games(self) -> list[str]:
        """Game ids present, alphabetical."""
        return sorted({r.game for r in self.records})

    def runs(self, agent: str, time_limit: str) -> list[str]:
        """Run names of one agent at one time limit, sorted (the order the bootstrap
        resamples them in, so it must not depend on the order of the files or lines)."""
        return sorted(
            {r.run for r in self.records if r.agent == agent and r.time_limit == time_limit}
        )

    def episodes(
        self, agent: str, time_limit: str, run: str | None = None
    ) -> dict[str, GameEpisodes]:
        """Per-game episodes of one agent at one time limit, alphabetical by game id, each
        game's episodes in :func:`canonical_order` (so resampling never sees line order).

        Args:
            agent: the agent.
            time_limit: one of :data:`saber.protocol.TIME_LIMITS`.
            run: only this run's episodes; None pools every run's.
        """
        by_game: dict[str, list[EpisodeScore]] = {}
        for r in canonical_order(self.records):
            if r.agent == agent and r.time_limit == time_limit and run in (None, r.run):
                by_game.setdefault(r.game, []).append(r)
        return {
            game: GameEpisodes(
                game=game,
                scores=np.array([r.score for r in rows], dtype=float),
                infinite=any(r.infinite for r in rows),
            )
            for game, rows in sorted(by_game.items())
        }

    def run_episodes(self, agent: str, time_limit: str) -> dict[str, dict[str, GameEpisodes]]:
        """``{run: {game: episodes}}`` of one agent at one time limit."""
        return {run: self.episodes(agent, time_limit, run) for run in self.runs(agent, time_limit)}


def canonical_order(rows: Iterable[EpisodeScore]) -> list[EpisodeScore]:
    """``rows`` sorted by agent, run, game, time limit (registry order), episode, score.

    A report is a function of the set of scores and the seed: the bootstrap draws episode
    indices, so the scores are put in this order before any resampling, whatever order
    the lines of the files were in (a resumed run appends in finishing order).

    >>> rows = [EpisodeScore("a", "pong", "saber", s, False, e, "") for s, e in ((3.0, 1), (5.0, 0))]
    >>> [row.score for row in canonical_order(rows)]
    [5.0, 3.0]
    """
    rank = {limit.name: index for index, limit in enumerate(limits.TIME_LIMITS)}

    def key(row: EpisodeScore) -> tuple[Any, ...]:
        episode = -1 if row.episode is None else row.episode
        return (row.agent, row.run, row.game, rank.get(row.time_limit, -1), episode, row.score)

    return sorted(rows, key=key)


def game_id(name: str, where: str) -> str:
    """The ale id of a game name; an unknown name is an error naming ``where``."""
    try:
        return get_game(name).ale_id
    except UnknownGameError as error:
        raise UnknownGameError(f"{where}: {error}") from None


class TableBuilder:
    """Collects rows into a table, refusing the same score given twice."""

    def __init__(self) -> None:
        self.table = ScoreTable()
        self._seen: dict[tuple[str, str, str, str, int | None], str] = {}

    def add(self, record: EpisodeScore) -> None:
        if record.infinite and record.time_limit != "saber":
            raise ScoreFileError(
                f"{record.where}: infinite score for game {record.game} at time limit "
                f"{record.time_limit}: only the saber limit can have infinite gameplay"
            )
        key = (record.agent, record.run, record.game, record.time_limit, record.episode)
        if key in self._seen:
            episode = "" if record.episode is None else f", episode {record.episode}"
            run = "" if record.run == DEFAULT_RUN else f", run {record.run!r}"
            hint = (
                "add an `episode` column if these rows are episodes, or a `time_limit` column "
                "if they are different time limits"
                if record.episode is None
                else "each episode may appear once per run (a `run` column tells runs apart; "
                "for harness results: saber eval --run NAME)"
            )
            raise ScoreFileError(
                f"{record.where}: game {record.game} given twice for agent {record.agent!r} "
                f"at time limit {record.time_limit}{run}{episode} (first at {self._seen[key]}); {hint}"
            )
        self._seen[key] = record.where
        self.table.records.append(record)

    def finished(self, empty: str) -> ScoreTable:
        """The table, its rows in :func:`canonical_order`: what every reader returns.

        Raises:
            ScoreFileError: ``empty`` (which names the file) when no score was added.
        """
        if not self.table.records:
            raise ScoreFileError(empty)
        self.table.records = canonical_order(self.table.records)
        return self.table


def _add_game_sets(merged: ScoreTable, table: ScoreTable) -> None:
    """A run named in several tables covers the games of them all: one run evaluated into
    several directories (one per game, as Atari agents are trained one per game, or one
    per cluster), each ``saber eval --run NAME`` with the same name."""
    for key, (games, source) in table.game_sets.items():
        if key in merged.game_sets:
            earlier, earlier_source = merged.game_sets[key]
            games, source = earlier | games, f"{earlier_source} + {source}"
        merged.game_sets[key] = (games, source)


def _check_game_sets(merged: ScoreTable) -> None:
    """Refuse runs of one agent that cover different games: the runs x games matrix that
    the aggregates resample over runs needs every run on every game."""
    first: dict[str, tuple[str, frozenset[str], str]] = {}
    for (agent, run), (games, source) in merged.game_sets.items():
        other_run, other_games, other_source = first.setdefault(agent, (run, games, source))
        if other_games != games:
            extra = sorted(games ^ other_games)
            raise ScoreFileError(
                f"{source}: run {run!r} of agent {agent!r} was evaluated on another game "
                f"set than run {other_run!r} ({other_source}); they differ in "
                f"{', '.join(extra[:5])}{' ...' if len(extra) > 5 else ''}. Runs of one "
                "agent must cover the same games: report them separately, or evaluate the "
                "missing games into each run. One run evaluated into several directories "
                "(one per game, say) needs the same run name in each: saber eval --run NAME"
            )


def merge_tables(tables: Iterable[ScoreTable]) -> ScoreTable:
    """One table from several (e.g. one harness run per agent, per seed, or per game).

    Harness directories of one agent with the same run name are one run, covering the
    games of them all (one directory per game); with different names, they are its runs
    (seeds).

    Raises:
        ScoreFileError: a duplicate (agent, run, game, time limit, episode), or runs of
            one agent evaluated on different game sets.
    """
    builder = TableBuilder()
    merged = builder.table
    for table in tables:
        _add_game_sets(merged, table)
        for record in table.records:
            builder.add(record)
        merged.sources.extend(table.sources)
        merged.warnings.extend(table.warnings)
        merged.saber_compliant &= table.saber_compliant
        merged.mean_only |= table.mean_only
        merged.references.update(table.references)
        merged.trained_outside_saber.update(table.trained_outside_saber)
    _check_game_sets(merged)
    return merged
