"""Reading score tables: CSV files written by hand or by other code, and harness results.

Both become one tidy :class:`ScoreTable` of :class:`EpisodeScore` rows (one per agent,
game, time limit and episode), read with the standard library only.

**CSV** (a header, then one row per score)::

    agent,game,time_limit,episode,score
    my-dqn,pong,saber,0,21
    my-dqn,pong,saber,1,19
    my-dqn,Battle Zone,saber,0,inf

Required columns ``game`` and ``score``; optional ``agent`` (default ``"agent"``),
``episode`` (an integer >= 0; several rows of a game are its episodes, averaged into the
game's mean), ``run`` (any non-empty text: a seed, a run name; rows of different runs are
independent training runs of the agent, default ``"default"``), ``time_limit`` (``5min``, ``30min`` or ``saber``; default ``saber``) and
``infinite`` (``true``/``false``). Column names are case-insensitive; other columns are
ignored. A score of ``inf`` or ``infinite`` marks infinite gameplay, which only the
``saber`` limit can have. Without an ``episode`` column a game may appear once per agent,
run and time limit: a second row is an error, as it usually means that rows of different
time limits were mixed up.

**Harness results**: a run directory holding ``episodes.jsonl`` (or that file itself),
one JSON object per finished episode with keys ``game``, ``episode``, ``agent``,
``score``, ``score_5min``, ``score_30min`` and ``infinite``. Each record becomes three
rows, one per time limit; records with an ``error`` key are skipped with a warning. A
``run.json`` beside it with ``"non_saber": true`` marks the table non-compliant. The
run's name is the record's ``run`` key, else ``run.json``'s ``"run"`` (``saber eval
--run NAME``), else the directory's name; ``run.json``'s ``"games"`` is the game set the
run was evaluated on, and runs of one agent on different game sets are refused.

Every error names the file and line, and the game where there is one.
"""

from __future__ import annotations

import contextlib
import csv
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from saber.errors import ScoreFileError, UnknownGameError, shown
from saber.games import get_game
from saber.protocol import limits
from saber.protocol.damage import check_run_directory
from saber.protocol.rundir import (
    EPISODES_FILE,
    RUN_FILE,
    FailureSummary,
    is_torn,
    read_episode_lines,
    read_run_json,
    run_key,
)
from saber.protocol.seeds import SEED_SCHEME, episode_seed
from saber.protocol.training import is_training_line

__all__ = [
    "DEFAULT_AGENT",
    "DEFAULT_RUN",
    "EpisodeScore",
    "GameEpisodes",
    "ScoreTable",
    "canonical_order",
    "merge_tables",
    "parse_score",
    "parse_time_limit",
    "read_harness_results",
    "read_score_csv",
    "read_scores",
]

DEFAULT_AGENT = "agent"
DEFAULT_RUN = "default"

_INFINITE_SPELLINGS = {"inf", "+inf", "infinite", "infinity", "+infinity", "∞"}


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
    """

    records: list[EpisodeScore] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    saber_compliant: bool = True
    warnings: list[str] = field(default_factory=list)
    mean_only: set[str] = field(default_factory=set)
    references: dict[str, str] = field(default_factory=dict)
    game_sets: dict[tuple[str, str], tuple[frozenset[str], str]] = field(default_factory=dict)

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


def parse_time_limit(text: str, where: str = "") -> str:
    """``"5min"``, ``"30min"`` or ``"saber"`` from a spelling (``30m``, ``unlimited``, ...)."""
    try:
        return limits.time_limit(text).name
    except ValueError as error:
        raise ScoreFileError(f"{where}: {error}") from None


def parse_score(text: str, where: str = "", game: str = "") -> tuple[float, bool]:
    """A score cell as ``(value, infinite)``: ``"12.5"`` -> (12.5, False), ``"inf"`` -> (inf, True).

    Raises:
        ScoreFileError: empty, not a number, NaN or negative infinity.
    """
    cell = text.strip()
    if cell.lower() in _INFINITE_SPELLINGS:
        return math.inf, True
    try:
        value = float(cell)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise ScoreFileError(
            f"{where}: score {cell!r} of game {game} is not a number "
            f"(write a number, or inf for infinite gameplay)"
        )
    return value, False


def _parse_bool(text: str, where: str, column: str) -> bool:
    cell = text.strip().lower()
    if cell in {"true", "1", "yes"}:
        return True
    if cell in {"false", "0", "no", ""}:
        return False
    raise ScoreFileError(f"{where}: column {column!r} must be true or false, got {text!r}")


def _parse_episode(text: str, where: str) -> int:
    try:
        episode = int(text.strip())
    except ValueError:
        raise ScoreFileError(f"{where}: episode {text!r} is not an integer") from None
    if episode < 0:
        raise ScoreFileError(f"{where}: episode {episode} is negative; episodes count from 0")
    return episode


def _game_id(name: str, where: str) -> str:
    try:
        return get_game(name).ale_id
    except UnknownGameError as error:
        raise UnknownGameError(f"{where}: {error}") from None


class _Builder:
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


def read_score_csv(path: str | Path) -> ScoreTable:
    """Read a CSV of scores (format in the module docstring).

    Raises:
        ScoreFileError: empty file, missing columns, bad cells, duplicates; the message
            names ``file:line`` and the game.
        UnknownGameError: an unknown game name, with ``file:line``.
    """
    path = Path(path)
    try:
        return _read_score_csv(path)
    except UnicodeDecodeError:
        raise ScoreFileError(f"{path}: {not_utf8(path)}") from None
    except OSError as error:  # unreadable: permissions, a directory, an I/O error
        raise ScoreFileError(f"Cannot read {path}: {error.strerror or error}") from None
    except csv.Error as error:  # a cell over the csv module's limit (128 KB)
        raise ScoreFileError(
            f"{path}: not a score table ({error}); expect a CSV header, then one row per score"
        ) from None


def not_utf8(path: Path) -> str:
    """Why a file is not UTF-8 text, for people: ``not UTF-8 text (byte 0xe9 at line 3,
    column 7); save it as UTF-8``."""
    data = path.read_bytes()
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        return (
            f"not UTF-8 text (byte 0x{data[error.start]:02x} at line {line}, column "
            f"{column}); save the file as UTF-8 (spreadsheets: CSV UTF-8)"
        )
    return "not UTF-8 text"


def _read_score_csv(path: Path) -> ScoreTable:
    builder = _Builder()
    builder.table.sources.append(str(path))
    with path.open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.reader(handle)
        header = next(reader, None)
        if header is None or not any(cell.strip() for cell in header):
            raise ScoreFileError(f"{path}: the file is empty; expected a header with game,score")
        columns = {cell.strip().lower(): i for i, cell in enumerate(header)}
        missing = [c for c in ("game", "score") if c not in columns]
        if missing:
            raise ScoreFileError(
                f"{path}:1: missing column(s) {', '.join(missing)} in the header "
                f"(found: {', '.join(shown(cell.strip()) for cell in header)})"
            )
        for row in reader:
            where = f"{path}:{reader.line_num}"
            if not any(cell.strip() for cell in row):
                continue
            if len(row) != len(header):
                raise ScoreFileError(
                    f"{where}: {len(row)} cells where the header has {len(header)}"
                )

            def cell(name: str, default: str = "", row: list[str] = row) -> str:
                return row[columns[name]].strip() if name in columns else default

            game = _game_id(cell("game"), where)
            score, infinite = parse_score(cell("score"), where, game)
            agent = cell("agent", DEFAULT_AGENT)
            if not agent:
                raise ScoreFileError(f"{where}: empty agent name for game {game}")
            run = cell("run", DEFAULT_RUN)
            if not run:
                raise ScoreFileError(
                    f"{where}: empty run for game {game}; give every row a run name "
                    "(a seed, a run id), or drop the run column"
                )
            record = EpisodeScore(
                agent=agent,
                game=game,
                time_limit=parse_time_limit(cell("time_limit", "saber"), where),
                score=score,
                infinite=infinite or _parse_bool(cell("infinite"), where, "infinite"),
                episode=_parse_episode(cell("episode"), where) if "episode" in columns else None,
                where=where,
                run=run,
            )
            try:
                builder.add(record)
            except ScoreFileError as error:
                if "training_frames" not in columns:
                    raise
                # The layout of saber/data/saber_paper_agents.csv: one row per checkpoint.
                raise ScoreFileError(
                    f"{error}. This file has a training_frames column: keep the rows of one "
                    "training checkpoint (the SABER paper's agents: saber report --reference "
                    "saber-paper)"
                ) from None
    if not builder.table.records:
        raise ScoreFileError(f"{path}: no scores, only a header")
    builder.table.records = canonical_order(builder.table.records)
    return builder.table


def _number(record: dict, key: str, where: str, game: str) -> float:
    value = record.get(key)
    number = math.nan
    if isinstance(value, int | float) and not isinstance(value, bool):
        # An integer past the floats (10**309) stays NaN: no score is that big.
        with contextlib.suppress(OverflowError):
            number = float(value)
    if not math.isfinite(number):
        shown = f"an integer of {len(str(value))} digits" if isinstance(value, int) else repr(value)
        raise ScoreFileError(f"{where}: {key} of game {game} must be a finite number, got {shown}")
    return number


def _episode_of(record: dict, where: str, game: str) -> int | None:
    """A harness record's ``episode``: an integer >= 0, or None when it has none."""
    episode = record.get("episode")
    if episode is not None and (
        isinstance(episode, bool) or not isinstance(episode, int) or episode < 0
    ):
        raise ScoreFileError(f"{where}: episode {episode!r} of game {game} is not an integer >= 0")
    return episode


def add_harness_record(
    builder: _Builder, record: dict, where: str, run: str, agent: str = DEFAULT_AGENT
) -> None:
    """Add one finished harness episode record as one row per time limit.

    ``record`` has the keys of an ``episodes.jsonl`` line (``game``, ``episode``,
    ``score``, ``score_5min``, ``score_30min``, ``infinite``, optional ``agent`` and
    ``run``, which override ``agent`` and ``run``).

    Raises:
        ScoreFileError: a missing or bad key (``where``, game); a duplicate.
    """
    game = _game_id(str(record["game"]), where)
    episode = _episode_of(record, where, game)
    # A record without a run (or with "run": null) belongs to the directory's run.
    run_name = run if record.get("run") is None else record["run"]
    if not isinstance(run_name, str | int) or isinstance(run_name, bool) or str(run_name) == "":
        raise ScoreFileError(f"{where}: run {run_name!r} of game {game} must be a non-empty name")
    for limit in limits.TIME_LIMITS:
        builder.add(
            EpisodeScore(
                agent=str(record.get("agent") or agent),
                game=game,
                time_limit=limit.name,
                score=_number(record, limit.record_field, where, game),
                infinite=limit.frames is None and record.get("infinite") is True,
                episode=episode,
                where=where,
                run=str(run_name),
            )
        )


def _run_json(directory: Path) -> tuple[dict | None, Path]:
    """``run.json`` beside the episodes as it is (None if there is none)."""
    run_file = directory / RUN_FILE
    try:
        run = read_run_json(run_file)
    except FileNotFoundError:
        return None, run_file
    return (run if isinstance(run, dict) else {}), run_file


@dataclass(frozen=True)
class _Request:
    """What ``run.json`` says the run was asked to play: records outside it are not the
    run's (a line pasted in from elsewhere, or edited), and are left out of reports."""

    games: frozenset[str] | None
    episodes: int | None
    agent: str | None
    base_seed: int | None
    checks_seeds: bool

    @classmethod
    def of(cls, run: dict, where: str) -> _Request:
        games = run.get("games")
        episodes = run.get("episodes")
        base_seed = run.get("base_seed")
        # A base seed episode seeds derive from: an integer >= 0 (not a bool, not -1).
        seeds_checkable = (
            isinstance(base_seed, int) and not isinstance(base_seed, bool) and base_seed >= 0
        )
        return cls(
            games=(
                frozenset(_game_id(str(game), where) for game in games)
                if isinstance(games, list) and games
                else None
            ),
            episodes=(
                episodes
                if isinstance(episodes, int) and not isinstance(episodes, bool) and episodes > 0
                else None
            ),
            agent=str(run["agent"]) if run.get("agent") is not None else None,
            base_seed=base_seed if seeds_checkable else None,
            checks_seeds=run.get("seed_scheme") == SEED_SCHEME and seeds_checkable,
        )

    def outside(self, record: dict, game: str) -> str | None:
        """Why ``record`` (of ``game``, an ale id) is not one the run asked for, or None."""
        episode = record.get("episode")
        if self.games is not None and game not in self.games:
            return "a game the run did not ask for"
        if self.episodes is not None and isinstance(episode, int) and episode >= self.episodes:
            return f"the run asked for episodes 0..{self.episodes - 1}"
        if self.agent is not None and "agent" in record and str(record["agent"]) != self.agent:
            return f"agent {record['agent']!r}, the run's is {self.agent!r}"
        seed = record.get("seed")
        if (
            self.checks_seeds
            and isinstance(seed, int)
            and isinstance(episode, int)
            and episode >= 0
            and seed != episode_seed(self.base_seed or 0, game, episode)
        ):
            return f"seed {seed} is not that episode's seed under the run's base seed"
        return None

    def count(self) -> int | None:
        """Episodes the run asked for, when ``run.json`` says."""
        if self.games is None or self.episodes is None:
            return None
        return len(self.games) * self.episodes


def _last_session_status(run: dict) -> str:
    sessions = run.get("sessions")
    if not isinstance(sessions, list) or not sessions or not isinstance(sessions[-1], dict):
        return "unknown"
    last = sessions[-1]
    if last.get("status"):
        return str(last["status"])
    return "running, or killed outright" if "ended" not in last else "ended"


def _listed(items: list[str], shown: int = 5) -> str:
    more = f" and {len(items) - shown} more" if len(items) > shown else ""
    return "; ".join(items[:shown]) + more


def read_harness_results(path: str | Path) -> ScoreTable:
    """Read the harness's results: a run directory or its ``episodes.jsonl``.

    Each record gives three rows: ``score_5min`` at ``5min``, ``score_30min`` at
    ``30min``, and ``score`` with its ``infinite`` flag at ``saber``. The run's name is
    the record's ``run``, else ``run.json``'s ``"run"``, else the directory's name.

    Everything that makes the scores less than the run asked for is a warning of the
    table: no ``run.json`` (no provenance), an unfinished run, failed episodes, a last
    line cut short, records completed after a crash (``torn``), and records outside
    the run's request (another game, episode, agent or seed than ``run.json`` says), which
    are left out. (A record's ``run`` may differ from ``run.json``'s: it names its run.)

    Raises:
        ScoreFileError: unreadable lines, missing keys, duplicates (``file:line``, game),
            or a ``run.json`` that belongs to another directory. Damaged files (a cut, NUL
            bytes, lines that are not JSON, ...): the advice of ``saber eval`` and ``saber
            verify`` (:func:`saber.protocol.damage.check_run_directory`).
        UnknownGameError: an unknown game, with ``file:line``.
    """
    path = Path(path)
    directory, episodes_file = (
        (path, path / EPISODES_FILE) if path.is_dir() else (path.parent, path)
    )
    if not episodes_file.is_file():
        raise ScoreFileError(f"{path}: no episodes.jsonl in this directory")
    found_run, run_file = _run_json(directory)
    run = found_run if found_run is not None else {}
    builder = _Builder()
    table = builder.table
    if found_run is None:
        table.warnings.append(
            f"{directory}: no {RUN_FILE} beside {EPISODES_FILE}: the run's provenance "
            "(agent, settings, versions, seeds, what was asked for) is missing, so nothing "
            "shows that these are SABER scores of the whole run"
        )
    check_run_directory(directory, found_run, episodes_file)  # the advice of eval and verify
    request = _Request.of(run, str(run_file))
    run_name = str(run.get("run") or directory.resolve().name or DEFAULT_RUN)
    table.sources.append(str(episodes_file))
    failures: list[dict] = []  # every failed attempt
    finished: set[tuple[str, Any]] = set()
    torn: list[int] = []
    outside: list[str] = []
    found = read_episode_lines(episodes_file)
    for number, record in found.lines:
        where = f"{episodes_file}:{number}"
        if is_torn(record):  # its fields may be cut short: it is no episode's record
            torn.append(number)
            continue
        if "game" not in record:
            raise ScoreFileError(f"{where}: record without a game")
        if is_training_line(record):  # its frames are cumulative training frames
            raise ScoreFileError(
                f"{where}: a training log's line (a saber.training recorder's), not an "
                f"evaluation's episode; saber training {episodes_file} reads it"
            )
        game = _game_id(str(record["game"]), where)
        why = request.outside(record, game)
        if why is not None:
            outside.append(f"line {number}, {game} episode {record.get('episode')}: {why}")
            continue
        if record.get("error"):
            _episode_of(record, where, game)  # a failed attempt names its episode too
            failures.append({**record, "game": game})
            continue
        add_harness_record(builder, record, where, run_name, str(run.get("agent") or DEFAULT_AGENT))
        finished.add((game, record.get("episode")))
    if found.unterminated is not None and (not found.lines or found.lines[-1][0] != found.count):
        table.warnings.append(
            f"{episodes_file}:{found.count}: the last line is cut short (a run writing it "
            "right now, or one that crashed): not counted; resuming the run repairs it"
        )
    if torn:
        table.warnings.append(
            f"{episodes_file}: {len(torn)} record(s) cut short by a crash and completed on "
            f"resume (line(s) {', '.join(map(str, torn[:5]))}): not counted"
        )
    if outside:
        table.warnings.append(
            f"{episodes_file}: {len(outside)} record(s) outside what {run_file} says the run "
            f"asked for, left out: {_listed(outside)}"
        )
    if failures:
        summary = FailureSummary.of(failures, finished)
        table.warnings.append(f"{episodes_file}: {summary.describe()}")
    requested = request.count()
    if requested is not None and len(finished) < requested:
        table.warnings.append(
            f"{directory}: an unfinished run: {len(finished)} of the {requested} episodes it "
            f"asked for finished (last session: {_last_session_status(run)}); these scores "
            "are not the run's. Run its saber eval command again to finish it"
        )
    if not table.records:
        raise ScoreFileError(f"{episodes_file}: no finished episodes")
    table.records = canonical_order(table.records)
    if request.games is not None:
        for agent, name in {(r.agent, r.run) for r in table.records}:
            table.game_sets[(agent, name)] = (request.games, str(run_file))
    if run.get("non_saber"):
        table.saber_compliant = False
        table.warnings.append(
            f"{run_file}: the run used settings that break the SABER protocol; "
            "its scores are not SABER scores"
        )
    return table


def _check_game_sets(merged: ScoreTable, table: ScoreTable) -> None:
    for (agent, run), (games, source) in table.game_sets.items():
        for (other_agent, other_run), (other_games, other_source) in merged.game_sets.items():
            if other_agent == agent and other_games != games:
                extra = sorted(games ^ other_games)
                raise ScoreFileError(
                    f"{source}: run {run!r} of agent {agent!r} was evaluated on another game "
                    f"set than run {other_run!r} ({other_source}); they differ in "
                    f"{', '.join(extra[:5])}{' ...' if len(extra) > 5 else ''}. Runs of one "
                    "agent must cover the same games: report them separately, or evaluate the "
                    "missing games into each run"
                )
        merged.game_sets[(agent, run)] = (games, source)


def merge_tables(tables: Iterable[ScoreTable]) -> ScoreTable:
    """One table from several (e.g. one harness run per agent or per seed).

    Raises:
        ScoreFileError: a duplicate (agent, run, game, time limit, episode), or runs of
            one agent evaluated on different game sets.
    """
    builder = _Builder()
    merged = builder.table
    for table in tables:
        _check_game_sets(merged, table)
        for record in table.records:
            builder.add(record)
        merged.sources.extend(table.sources)
        merged.warnings.extend(table.warnings)
        merged.saber_compliant &= table.saber_compliant
        merged.mean_only |= table.mean_only
        merged.references.update(table.references)
    return merged


def _harness_run_key(path: Path) -> tuple[str, str]:
    """What tells one harness run from another (:func:`~saber.protocol.rundir.run_key`:
    the same in every copy of its directory), and how it is named for people."""
    directory, episodes_file = (
        (path, path / EPISODES_FILE) if path.is_dir() else (path.parent, path)
    )
    run, _ = _run_json(directory)
    key = run_key(run, episodes_file)
    kind, _, value = key.partition(":")
    named = f"run_id {value}" if kind == "run_id" else "the same first record and start"
    return key, f"one run: {named}"


def read_scores(*paths: str | Path) -> ScoreTable:
    """Read score files of either kind and merge them.

    A directory or a ``.jsonl`` file is read as harness results, anything else as CSV.
    A run given twice (the same directory, its ``episodes.jsonl``, or a copy of the
    directory: the same ``run_id`` in ``run.json``, or for runs of saber 0.3 and older the
    same content) counts once, and the table says so in a warning that starts with
    ``merged:``; of copies that differ (one copied before the run went on), the one with
    the most episodes is kept. (A CSV file given twice is refused as duplicate scores:
    a CSV names no run to merge by.)

    Raises:
        ScoreFileError: a path that does not exist, or any error of the readers.
    """
    if not paths:
        raise ScoreFileError("No score files given")
    tables: list[ScoreTable] = []
    seen: dict[str, tuple[int, Path]] = {}  # run key -> (its table, the path read first)
    merged: list[str] = []
    for path in map(Path, paths):
        if not path.exists():
            raise ScoreFileError(f"{path}: no such file or directory")
        is_harness = path.is_dir() or path.suffix == ".jsonl"
        if not is_harness:
            tables.append(read_score_csv(path))
            continue
        table = read_harness_results(path)
        key, same = _harness_run_key(path)
        if key not in seen:
            seen[key] = (len(tables), path)
            tables.append(table)
            continue
        index, first = seen[key]
        kept = tables[index]
        if len(table.records) > len(kept.records):
            tables[index], kept = table, table
        counts = sorted({len(kept.records) // 3, len(table.records) // 3})
        differ = (
            f"; they differ ({' and '.join(map(str, counts))} episodes), the larger is kept"
            if len(counts) > 1
            else ""
        )
        merged.append(
            f"merged: {path} and {first} hold {same}: counted once, from {kept.sources[0]}{differ}"
        )
    result = tables[0] if len(tables) == 1 else merge_tables(tables)
    result.warnings.extend(merged)
    return result
