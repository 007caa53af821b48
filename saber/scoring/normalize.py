"""Normalized scores: raw game points to percent of a reference performance.

The three references (world record, beginner human, average human) and their formulas
are in docs/reports.md; a game without the reference gives NaN, never a number.

    >>> normalize([[5.0, 5.0]], ["pong", "tennis"], "world_record").round(2).tolist()
    [[61.3, nan]]
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from saber.games import GameInfo, get_game

#: What a score is normalized by: the world record, the beginner human or the average human.
Reference = Literal["world_record", "human", "human_average"]
REFERENCES: tuple[Reference, ...] = ("world_record", "human", "human_average")


def world_record_normalize(score: ArrayLike, random: ArrayLike, record: ArrayLike) -> NDArray:
    """SABER's world-record-normalized score, in percent.

    ``100 * (score - random) / |record - random|`` (Toromanoff et al. 2019, section 4).

    Args:
        score: raw scores, any shape.
        random: random-agent scores, broadcastable to ``score``.
        record: human world records, broadcastable to ``score``.

    Returns:
        Array of the broadcast shape, percent (100 = the world record).

    Example:
        >>> float(world_record_normalize(1000.0, random=0.0, record=4000.0))
        25.0
    """
    score, random, record = (np.asarray(a, dtype=float) for a in (score, random, record))
    # Ratio first, then percent: an agent exactly at the record gives exactly 100.
    return (score - random) / np.abs(record - random) * 100.0


def human_normalize(score: ArrayLike, random: ArrayLike, human: ArrayLike) -> NDArray:
    """Human-normalized score, in percent: ``100 * (score - random) / (human - random)``.

    The formula of Mnih et al. 2015 (Nature, "Methods"); used with the beginner-human
    scores of that paper (reference ``"human"``) or with the average-human scores of the
    Atari-57 table (reference ``"human_average"``, Atari-5).

    Args:
        score: raw scores, any shape.
        random: random-agent scores, broadcastable to ``score``.
        human: human scores, broadcastable to ``score``.

    Returns:
        Array of the broadcast shape, percent (100 = the human).
    """
    score, random, human = (np.asarray(a, dtype=float) for a in (score, random, human))
    return (score - random) / (human - random) * 100.0


def _low_high(game: GameInfo, reference: Reference) -> tuple[float | None, float | None]:
    if reference == "world_record":
        return game.random, game.world_record
    if reference == "human":
        return game.random, game.human
    return game.atari57_random, game.atari57_human


def _check_reference(reference: str) -> None:
    if reference not in REFERENCES:
        raise ValueError(
            f"Unknown reference {reference!r}; expected one of {', '.join(REFERENCES)}"
        )


def has_baseline(game: str, reference: Reference) -> bool:
    """Whether ``game`` (any spelling) has both scores ``reference`` needs."""
    _check_reference(reference)
    low, high = _low_high(get_game(game), reference)
    return low is not None and high is not None


@functools.lru_cache(maxsize=256)
def _baselines(ale_ids: tuple[str, ...], reference: Reference) -> tuple[NDArray, NDArray]:
    pairs = [_low_high(get_game(name), reference) for name in ale_ids]
    low = np.array([np.nan if lo is None else lo for lo, _ in pairs], dtype=float)
    high = np.array([np.nan if hi is None else hi for _, hi in pairs], dtype=float)
    low.flags.writeable = high.flags.writeable = False  # cached: callers must not edit
    return low, high


def baseline_arrays(games: Sequence[str], reference: Reference) -> tuple[NDArray, NDArray]:
    """The (low, high) reference scores of ``games``: random, and record or human.

    Args:
        games: G game names, any spelling.
        reference: ``"world_record"``, ``"human"`` or ``"human_average"``.

    Returns:
        Two read-only float arrays of shape (G,), NaN where the game lacks the score.
    """
    _check_reference(reference)
    return _baselines(tuple(get_game(name).ale_id for name in games), reference)


def normalize(scores: ArrayLike, games: Sequence[str], reference: Reference) -> NDArray:
    """Normalize raw scores of G games against a reference, in percent.

    Args:
        scores: raw scores of shape (..., G), the last axis following ``games``.
        games: G game names, any spelling.
        reference: ``"world_record"``, ``"human"`` or ``"human_average"`` (docs/reports.md).

    Returns:
        Array of shape (..., G), percent; NaN for games without the reference, ``+inf``
        for infinite scores.
    """
    scores = np.asarray(scores, dtype=float)
    if scores.ndim == 0 or scores.shape[-1] != len(games):
        raise ValueError(
            f"Expect the last axis of `scores` to follow `games` ({len(games)}), "
            f"actually: shape {scores.shape}"
        )
    low, high = baseline_arrays(games, reference)
    if reference == "world_record":
        return world_record_normalize(scores, low, high)
    return human_normalize(scores, low, high)
