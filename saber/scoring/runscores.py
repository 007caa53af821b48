"""Reading the harness's results: a run directory (or its ``episodes.jsonl``) as a score
table, through the one reader of a run directory (:func:`saber.rundir.damage.read_checked`).
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from saber.errors import ScoreFileError
from saber.protocol import limits
from saber.protocol.training import is_training_line
from saber.rundir.damage import read_checked
from saber.rundir.reading import EpisodeLines, read_run_json, run_key
from saber.rundir.records import EPISODES_FILE, RUN_FILE, FailureSummary
from saber.rundir.runfile import RunRequest
from saber.scoring.scoretable import (
    DEFAULT_AGENT,
    DEFAULT_RUN,
    EpisodeScore,
    ScoreTable,
    TableBuilder,
    game_id,
)


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
    builder: TableBuilder, record: dict, where: str, run: str, agent: str = DEFAULT_AGENT
) -> None:
    """Add one finished harness episode record as one row per time limit.

    ``record`` has the keys of an ``episodes.jsonl`` line (``game``, ``episode``,
    ``score``, ``score_5min``, ``score_30min``, ``infinite``, optional ``agent`` and
    ``run``, which override ``agent`` and ``run``).

    Raises:
        ScoreFileError: a missing or bad key (``where``, game); a duplicate.
    """
    game = game_id(str(record["game"]), where)
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
            verify`` (:func:`saber.rundir.damage.check_run_directory`).
        UnknownGameError: an unknown game, with ``file:line``.
    """
    path = Path(path)
    directory, episodes_file = _run_paths(path)
    if not episodes_file.is_file():
        raise ScoreFileError(f"{path}: no episodes.jsonl in this directory")
    found_run, run_file = _run_json(directory)
    run = found_run if found_run is not None else {}
    builder = TableBuilder()
    table = builder.table
    if found_run is None:
        table.warnings.append(
            f"{directory}: no {RUN_FILE} beside {EPISODES_FILE}: the run's provenance "
            "(agent, settings, versions, seeds, what was asked for) is missing, so nothing "
            "shows that these are SABER scores of the whole run"
        )
    # The advice of eval and verify for damage; the records of the same pass over the file.
    found = read_checked(directory, found_run, episodes_file)
    request = RunRequest.of(run, lambda name: game_id(name, str(run_file)))
    run_name = str(run.get("run") or directory.resolve().name or DEFAULT_RUN)
    table.sources.append(str(episodes_file))
    taken = _take(builder, found, request, run_name, str(run.get("agent") or DEFAULT_AGENT))
    table.warnings += _warnings(taken, found, request, run, run_file)
    table = builder.finished(f"{episodes_file}: no finished episodes")
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


def _run_paths(path: Path) -> tuple[Path, Path]:
    """The run directory and its records of a path to either."""
    return (path, path / EPISODES_FILE) if path.is_dir() else (path.parent, path)


@dataclass
class _Taken:
    """What the records of a run gave besides the rows of its finished episodes.

    Attributes:
        failures: every failed attempt (its game as an ale id).
        finished: ``(game, episode)`` of each finished episode.
        torn: line numbers of records cut short by a crash and completed on resume.
        outside: records outside the run's request, for people.
    """

    failures: list[dict[str, Any]] = field(default_factory=list)
    finished: set[tuple[str, Any]] = field(default_factory=set)
    torn: list[int] = field(default_factory=list)
    outside: list[str] = field(default_factory=list)


def _take(
    builder: TableBuilder, found: EpisodeLines, request: RunRequest, run: str, agent: str
) -> _Taken:
    """Add each finished episode of ``found`` to ``builder`` (``run`` and ``agent``: the
    names of a record that gives none); what else the records hold is returned."""
    taken = _Taken()
    for line in found.records():
        record, where = line.record, line.where
        if line.kind == "torn":  # its fields may be cut short: it is no episode's record
            taken.torn.append(line.number)
            continue
        if "game" not in record:
            raise ScoreFileError(f"{where}: record without a game")
        if is_training_line(record):  # its frames are cumulative training frames
            raise ScoreFileError(
                f"{where}: a training log's line (a saber.training recorder's), not an "
                f"evaluation's episode; saber training {found.path} reads it"
            )
        game = game_id(str(record["game"]), where)
        why = request.outside(record, game)
        if why is not None:
            taken.outside.append(
                f"line {line.number}, {game} episode {record.get('episode')}: {why}"
            )
            continue
        # An empty "error" is no failure here (as in every saber before 0.4): the record counts.
        if record.get("error"):
            _episode_of(record, where, game)  # a failed attempt names its episode too
            taken.failures.append({**record, "game": game})
            continue
        add_harness_record(builder, record, where, run, agent)
        taken.finished.add((game, record.get("episode")))
    return taken


def _warnings(
    taken: _Taken, found: EpisodeLines, request: RunRequest, run: dict, run_file: Path
) -> list[str]:
    """Everything that makes the scores less than the run asked for, for people."""
    episodes_file, warnings = found.path, []
    if found.cut_short:
        warnings.append(
            f"{episodes_file}:{found.count}: the last line is cut short (a run writing it "
            "right now, or one that crashed): not counted; resuming the run repairs it"
        )
    if taken.torn:
        warnings.append(
            f"{episodes_file}: {len(taken.torn)} record(s) cut short by a crash and completed "
            f"on resume (line(s) {', '.join(map(str, taken.torn[:5]))}): not counted"
        )
    if taken.outside:
        warnings.append(
            f"{episodes_file}: {len(taken.outside)} record(s) outside what {run_file} says the "
            f"run asked for, left out: {_listed(taken.outside)}"
        )
    if taken.failures:
        summary = FailureSummary.of(taken.failures, taken.finished)
        warnings.append(f"{episodes_file}: {summary.describe()}")
    requested = request.count()
    if requested is not None and len(taken.finished) < requested:
        warnings.append(
            f"{run_file.parent}: an unfinished run: {len(taken.finished)} of the {requested} "
            f"episodes it asked for finished (last session: {_last_session_status(run)}); "
            "these scores are not the run's. Run its saber eval command again to finish it"
        )
    return warnings


def harness_run_key(path: Path) -> tuple[str, str]:
    """What tells one harness run from another (:func:`~saber.rundir.reading.run_key`:
    the same in every copy of its directory), and how it is named for people."""
    directory, episodes_file = _run_paths(path)
    run, _ = _run_json(directory)
    key = run_key(run, episodes_file)
    kind, _, value = key.partition(":")
    named = f"run_id {value}" if kind == "run_id" else "the same first record and start"
    return key, f"one run: {named}"
