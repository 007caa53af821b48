"""Reading a training log (written by :mod:`saber.training`'s recorders): the scores at
training checkpoints (``saber training LOG --at 10M,50M,100M,200M``).

docs/harness.md says when a checkpoint is reached and which episodes count.
"""

from __future__ import annotations

import gzip
import json
import math
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from saber.errors import TrainingLogError
from saber.protocol.training import (
    TRAINING_CHECKPOINTS,
    WINDOW,
    is_evaluation_line,
    parse_frames,
)

GZIP_MAGIC = b"\x1f\x8b"
READS = (
    "saber training reads the JSON-lines log of a TrainingRecorder (one line per training "
    "episode: game, frames, score), as .jsonl or .jsonl.gz"
)


@dataclass(frozen=True)
class CheckpointScore:
    """The training score of one game at one checkpoint.

    Attributes:
        game: ale id.
        at_frames: the checkpoint, in cumulative training frames.
        mean: mean score of the episodes averaged (None when none had ended, or when the
            log did not reach the checkpoint).
        episodes: how many were averaged (100, or fewer if fewer had ended; 0 when not
            reached).
        first_episode, last_episode: the ``episode`` numbers of the window.
        reached: whether the log reached the checkpoint (its last ``frames`` >= it); a
            checkpoint not reached has no score.
        log_frames: the log's last recorded cumulative training frames for this game
            (None when not known).
    """

    game: str
    at_frames: int
    mean: float | None
    episodes: int
    first_episode: int | None
    last_episode: int | None
    reached: bool = True
    log_frames: int | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        return dict(self.__dict__)


def _log_text(path: Path) -> str:
    """The text of the log at ``path``: plain or gzipped UTF-8.

    Raises:
        TrainingLogError: a directory, an unreadable file, a damaged gzip, or bytes that
            are not UTF-8 text.
    """
    if path.is_dir():
        raise TrainingLogError(_directory(path))
    try:
        data = path.read_bytes()
    except OSError as error:
        raise TrainingLogError(f"Cannot read {path}: {error.strerror or error}") from error
    if data.startswith(GZIP_MAGIC):
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as error:
            raise TrainingLogError(f"{path}: a damaged gzip file ({error}); {READS}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise TrainingLogError(
            f"{path}: not UTF-8 text (byte 0x{data[error.start]:02x} at line {line}), so not "
            f"a training log; {READS}"
        ) from None


def _directory(path: Path) -> str:
    """What to say of a directory given as a training log."""
    if (path / "episodes.jsonl").is_file() or (path / "run.json").is_file():
        return (
            f"{path}: an evaluation's run directory (saber eval), not a training log; "
            f"saber report {path} reads it"
        )
    logs = sorted(path.glob("*.jsonl")) + sorted(path.glob("*.jsonl.gz"))
    if logs:
        return f"{path}: a directory, not a training log; give the log itself, e.g. {logs[0]}"
    return f"{path}: a directory, not a training log; {READS}"


def _not_json_lines(path: Path, text: str, first: str) -> str:
    """What a file whose first line is not a JSON object is, for people."""
    try:
        document = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: arrays nested thousands deep
        document = None
    if isinstance(document, dict):
        kind = str(document.get("format", ""))
        if kind.startswith("saber-run") or "sessions" in document:
            return (
                f"{path}: an evaluation's run.json (the provenance of a saber eval run), not "
                f"a training log; saber report {path.parent} reads its run"
            )
        if kind.startswith("saber-report"):
            return f"{path}: a report (saber report --json), not a training log; {READS}"
        return f"{path}: one JSON document, not a training log; {READS}"
    header = [cell.strip().strip('"').lower() for cell in first.split(",")]
    if "game" in header and "score" in header:
        return (
            f"{path}: a score table (CSV with game, score), not a training log; "
            f"saber report {path} reads it"
        )
    return f"{path}:1: not a training log (not a JSON object per line); {READS}"


def _evaluation(where: str, path: Path) -> str:
    return (
        f"{where}: an evaluation's episode record (saber eval's episodes.jsonl: one line per "
        f"evaluation episode, no training frames), not a training log; saber report "
        f"{path.parent if path.name == 'episodes.jsonl' else path} reads it"
    )


def read_training_log(path: str | Path) -> dict[str, list[dict[str, Any]]]:
    """The episodes of a training log by game: ``frames``, ``score``, ``episode`` each.

    The log may be gzipped. Blank lines are skipped.

    Raises:
        TrainingLogError: a file that is not a training log (saying what it is and which
            command reads it), or a line that is not a training-log line (naming file and
            line).
    """
    path = Path(path)
    text = _log_text(path)
    by_game: dict[str, list[dict[str, Any]]] = {}
    # JSON Lines end at "\n" only: str.splitlines() would also split at "\x0b", "\x1c" or
    # U+2028 and read one damaged line as two episodes.
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            record = None
        if not isinstance(record, dict) or str(record.get("format", "")).startswith("saber-"):
            if not by_game:  # the first line: say what the file is
                raise TrainingLogError(_not_json_lines(path, text, line))
            raise TrainingLogError(f"{where}: not a JSON object; {READS}")
        if is_evaluation_line(record):
            raise TrainingLogError(_evaluation(where, path))
        try:
            by_game.setdefault(str(record["game"]), []).append(_episode(record, number - 1))
        except (ValueError, KeyError, TypeError, ArithmeticError, RecursionError):
            raise TrainingLogError(
                f"{where}: not a training-log line (game, frames, score); {READS}"
            ) from None
    return by_game


def _count(value: Any) -> int:
    """A JSON integer >= 0 as written (not a bool, a float or a string)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"not an integer >= 0: {value!r}")
    return value


def _episode(record: dict[str, Any], line_index: int) -> dict[str, Any]:
    """One line's ``frames``, ``score`` and ``episode`` (default: its 0-based line index),
    exactly as written: a number the log does not hold as written (``"frames": 1.5``, a
    score of NaN or ``true``) is an error, never rounded or averaged into a mean.

    Raises:
        KeyError, TypeError, ValueError: a key missing or not a number as the log needs.
        OverflowError: a score past the floats (an integer of over 308 digits).
    """
    score = record["score"]
    if isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score):
        raise ValueError(f"score {score!r} is not a finite number")
    return {
        "frames": _count(record["frames"]),
        "score": float(score),
        "episode": _count(record.get("episode", line_index)),
    }


def training_scores(
    path: str | Path,
    at_frames: Iterable[int | str] = TRAINING_CHECKPOINTS,
    trained_frames: int | None = None,
) -> list[CheckpointScore]:
    """The paper's training-time scores from a recorder log.

    At each checkpoint C (cumulative training frames) that the log reached (its last
    ``frames`` >= C), the mean score of the ``WINDOW`` (100) consecutive episodes that
    ended last at or before C; fewer when fewer had ended (``episodes`` says how many). A
    checkpoint the log did not reach has no score: ``reached`` False, ``mean`` None.

    Args:
        path: a log written by :class:`saber.training.TrainingRecorder` or
            :class:`saber.training.VectorTrainingRecorder` (``.jsonl``, or gzipped).
        at_frames: checkpoints, as ints or strings like ``"10M"``.
        trained_frames: the training's cumulative frames, when the caller knows them (a
            recorder's ``total_frames`` at the end): a training goes on past its last
            logged episode, and the checkpoints up to ``trained_frames`` count as reached.

    Returns:
        One :class:`CheckpointScore` per game of the log and checkpoint, game by game.

    Raises:
        TrainingLogError: no such file, or a file that is not a training log.
    """
    path = Path(path)
    if not path.exists():
        raise TrainingLogError(f"{path}: no such training log")
    checkpoints = [parse_frames(c) if isinstance(c, str) else int(c) for c in at_frames]
    results = []
    for game, episodes in read_training_log(path).items():
        results += game_training_scores(game, episodes, checkpoints, trained_frames)
    return results


def game_training_scores(
    game: str,
    episodes: list[dict[str, Any]],
    checkpoints: Iterable[int],
    trained_frames: int | None = None,
) -> list[CheckpointScore]:
    """:func:`training_scores` of one game's episodes (as :func:`read_training_log` gives
    them) at ``checkpoints`` (cumulative training frames), for a caller that has read the
    log already."""
    episodes = sorted(episodes, key=lambda e: (e["frames"], e["episode"]))
    ends = np.array([e["frames"] for e in episodes])
    log_frames = int(ends[-1]) if ends.size else None
    reach = max(log_frames or 0, trained_frames or 0) if episodes or trained_frames else None
    results = []
    for checkpoint in checkpoints:
        if reach is None or checkpoint > reach:
            results.append(
                CheckpointScore(game, checkpoint, None, 0, None, None, False, log_frames)
            )
            continue
        stop = int(np.searchsorted(ends, checkpoint, side="right"))
        window = episodes[max(0, stop - WINDOW) : stop]
        results.append(
            CheckpointScore(
                game=game,
                at_frames=checkpoint,
                mean=float(np.mean([e["score"] for e in window])) if window else None,
                episodes=len(window),
                first_episode=window[0]["episode"] if window else None,
                last_episode=window[-1]["episode"] if window else None,
                reached=True,
                log_frames=log_frames,
            )
        )
    return results


NOT_REACHED = "not reached"


def mean_cell(mean: float | None, reached: bool) -> str:
    """A mean score as the tables print it: ``-5.3``, ``n/a`` (no episode had ended by the
    checkpoint) or ``not reached`` (the log ends before it)."""
    if not reached:
        return NOT_REACHED
    return "n/a" if mean is None else f"{mean:,.1f}"


def episodes_cell(episodes: int, reached: bool) -> str:
    """The episodes averaged, as the tables print them (``-`` when not reached)."""
    if not reached:
        return "-"
    return f"{episodes}" + ("" if episodes == WINDOW else " (fewer than 100)")


def not_reached_note(scores: Iterable[Any]) -> str:
    """The line under a table that says where each log ended, when a checkpoint was not
    reached (empty otherwise). ``scores``: rows with ``game``, ``reached``, ``log_frames``."""
    ends = {s.game: s.log_frames for s in scores if not s.reached}
    if not ends:
        return ""
    where = "; ".join(
        f"{game}: {'no episode' if frames is None else f'last episode at {frames:,} frames'}"
        for game, frames in ends.items()
    )
    return (
        f"\n{NOT_REACHED}: the log ends before the checkpoint ({where}); a checkpoint "
        "counts once the log's training frames reach it.\n"
    )


def format_training_scores(scores: Sequence[CheckpointScore]) -> str:
    """A Markdown table of :func:`training_scores` (game, frames, mean, episodes); a
    checkpoint the log did not reach reads ``not reached``, with a note under the table."""
    lines = ["| game | frames | mean score | episodes |", "|---|---:|---:|---:|"]
    for score in scores:
        mean = mean_cell(score.mean, score.reached)
        episodes = episodes_cell(score.episodes, score.reached)
        lines.append(f"| {score.game} | {score.at_frames:,} | {mean} | {episodes} |")
    return "\n".join(lines) + "\n" + not_reached_note(scores)


def format_over_games(scores: Sequence[CheckpointScore]) -> str:
    """The median and mean over games of the world-record-normalized mean scores at each
    checkpoint, for a log of several games (a multi-game env's): a Markdown table, empty
    for a log of one game. A checkpoint counts the games with a score there; games
    without a world record (Double Dunk, Elevator Action, Tennis) are named under it.

    >>> rows = [CheckpointScore(g, 10**7, m, 100, 0, 99, True, 10**7)
    ...         for g, m in [("pong", 0.0), ("breakout", 100.0), ("tennis", 0.0)]]
    >>> print(format_over_games(rows), end="")
    | frames | games | median WR-normalized | mean WR-normalized |
    |---:|---:|---:|---:|
    | 10,000,000 | 2 | 30.3% | 30.3% |
    <BLANKLINE>
    Over games: each game's mean score normalized by the world record, in percent; without a world record (left out): tennis.
    """
    from saber.errors import UnknownGameError
    from saber.scoring.normalize import has_baseline, normalize

    games = list(dict.fromkeys(score.game for score in scores))
    if len(games) < 2:
        return ""
    normalized: dict[str, bool] = {}
    for game in games:
        try:
            normalized[game] = has_baseline(game, "world_record")
        except UnknownGameError:
            normalized[game] = False
    lines = [
        "| frames | games | median WR-normalized | mean WR-normalized |",
        "|---:|---:|---:|---:|",
    ]
    for checkpoint in dict.fromkeys(score.at_frames for score in scores):
        rows = [
            s
            for s in scores
            if s.at_frames == checkpoint and normalized[s.game] and s.mean is not None
        ]
        if not rows:
            lines.append(f"| {checkpoint:,} | 0 | n/a | n/a |")
            continue
        values = normalize([[s.mean for s in rows]], [s.game for s in rows], "world_record")[0]
        lines.append(
            f"| {checkpoint:,} | {len(rows)} | {np.median(values):,.1f}% | "
            f"{np.mean(values):,.1f}% |"
        )
    left_out = [game for game in games if not normalized[game]]
    note = "\nOver games: each game's mean score normalized by the world record, in percent"
    note += f"; without a world record (left out): {', '.join(left_out)}." if left_out else "."
    return "\n".join(lines) + "\n" + note + "\n"
