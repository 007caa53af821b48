"""Reading a training log (written by :mod:`saber.training`'s recorders): the scores at
training checkpoints (``saber training LOG --at 10M,50M,100M,200M``).

Each line of the log is one finished training episode with ``game``, ``frames`` (the
cumulative training frames when it ended), ``score`` and ``episode``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from saber.errors import SaberError
from saber.protocol.training import TRAINING_CHECKPOINTS, WINDOW, parse_frames

__all__ = [
    "CheckpointScore",
    "format_training_scores",
    "game_training_scores",
    "read_training_log",
    "training_scores",
]


@dataclass(frozen=True)
class CheckpointScore:
    """The training score of one game at one checkpoint.

    Attributes:
        game: ale id.
        at_frames: the checkpoint, in cumulative training frames.
        mean: mean score of the episodes averaged (None when none had ended).
        episodes: how many were averaged (100, or fewer if fewer had ended).
        first_episode, last_episode: the ``episode`` numbers of the window.
    """

    game: str
    at_frames: int
    mean: float | None
    episodes: int
    first_episode: int | None
    last_episode: int | None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        return dict(self.__dict__)


def read_training_log(path: Path) -> dict[str, list[dict[str, Any]]]:
    """The episodes of a training log by game: ``frames``, ``score``, ``episode`` each.

    Raises:
        SaberError: a line that is not a training-log line, naming file and line, or a
            file that is not UTF-8 text.
    """
    by_game: dict[str, list[dict[str, Any]]] = {}
    try:
        # JSON Lines end at "\n" only: str.splitlines() would also split at "\x0b", "\x1c"
        # or U+2028 and read one damaged line as two episodes.
        lines = path.read_bytes().decode("utf-8").split("\n")
    except UnicodeDecodeError:
        from saber.scoring.scorefile import not_utf8

        raise SaberError(f"{path}: {not_utf8(path)}") from None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            by_game.setdefault(str(record["game"]), []).append(_episode(record, number - 1))
        except (ValueError, KeyError, TypeError, ArithmeticError, RecursionError):
            raise SaberError(
                f"{path}:{number}: not a training-log line (game, frames, score)"
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
    path: str | Path, at_frames: Iterable[int | str] = TRAINING_CHECKPOINTS
) -> list[CheckpointScore]:
    """The paper's training-time scores from a recorder log.

    At each checkpoint C (cumulative training frames), the mean score of the ``WINDOW``
    (100) consecutive episodes that ended last at or before C; fewer when fewer had ended
    (``episodes`` says how many).

    Args:
        path: a log written by :class:`saber.training.TrainingRecorder` or
            :class:`saber.training.VectorTrainingRecorder`.
        at_frames: checkpoints, as ints or strings like ``"10M"``.

    Returns:
        One :class:`CheckpointScore` per game of the log and checkpoint, game by game.
    """
    path = Path(path)
    if not path.is_file():
        raise SaberError(f"{path}: no such training log")
    checkpoints = [parse_frames(c) if isinstance(c, str) else int(c) for c in at_frames]
    results = []
    for game, episodes in read_training_log(path).items():
        results += game_training_scores(game, episodes, checkpoints)
    return results


def game_training_scores(
    game: str, episodes: list[dict[str, Any]], checkpoints: Iterable[int]
) -> list[CheckpointScore]:
    """:func:`training_scores` of one game's episodes (as :func:`read_training_log` gives
    them) at ``checkpoints`` (cumulative training frames), for a caller that has read the
    log already."""
    episodes = sorted(episodes, key=lambda e: (e["frames"], e["episode"]))
    ends = np.array([e["frames"] for e in episodes])
    results = []
    for checkpoint in checkpoints:
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
            )
        )
    return results


def format_training_scores(scores: Sequence[CheckpointScore]) -> str:
    """A Markdown table of :func:`training_scores` (game, frames, mean, episodes)."""
    lines = ["| game | frames | mean score | episodes |", "|---|---:|---:|---:|"]
    for score in scores:
        mean = "n/a" if score.mean is None else f"{score.mean:,.1f}"
        note = "" if score.episodes == WINDOW else " (fewer than 100)"
        lines.append(f"| {score.game} | {score.at_frames:,} | {mean} | {score.episodes}{note} |")
    return "\n".join(lines) + "\n"
