"""The SABER rules that act on rewards and episode ends, each written once (protocol 1, 2, 4).

Pure functions on Python scalars, numpy rows and traced ``jax.numpy`` arrays alike (so no
``if``, ``and`` or ``not`` on values): docs/environments.md, "The rules kernel".

>>> is_rollover(-999_950.0, -100_000.0), correct_rollover(-999_950.0, "correct")
(True, 50.0)
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np

from saber.protocol.episode import EpisodeEnd, EpisodeRecord
from saber.protocol.settings import SABER_CAP_FRAMES

# The ends in order of precedence; an end's code (arrays of :mod:`saber.jax`) is its index.
END_REASONS: tuple[EpisodeEnd, ...] = (
    EpisodeEnd.GAME_OVER,
    EpisodeEnd.STUCK_TIMEOUT,
    EpisodeEnd.TIME_CAP,
    EpisodeEnd.TRUNCATED,
)
# ALE rewards are C ints: |reward| < 2**31 < 10**10, so 10 decimal digits bound every gain.
_ROLLOVER_DIGITS = 10


def is_rollover(reward: Any, threshold: float) -> Any:
    """A reward at or below ``threshold`` (points, negative) is a rollover of the score
    counter, not a penalty: no legitimate single reward of the 61 games comes near
    -100,000 (the most negative seen: Skiing's -10,000)."""
    return reward <= threshold


def correct_rollover(reward: float, mode: str) -> float:
    """The true gain hidden in a rollover reward ``reward`` (points, at or below the threshold).

    The score counter wrapped past ``10**k``: the ALE reported ``gain - 10**k``, so the
    gain is ``reward + 10**ceil(log10(-reward))`` (-999,950 -> +50). This is the rule of
    the SABER authors' code. Mode ``"ignore"`` drops the reward instead; ``"off"`` keeps it.

    ``10**ceil(log10(x))`` is computed exactly as the smallest power of ten at or above
    ``x``, by comparisons (a product of factors 10 or 1), so it gives the same result on
    floats and on integer arrays; an ``int32`` reward must be above ``-10**9`` (the power
    ``10**10`` does not fit in ``int32``; no ALE score counter has 10 digits).
    """
    if mode == "ignore":
        return reward - reward  # 0 of the reward's type and shape (+0.0, never -0.0)
    if mode == "off":
        return reward
    power = 1
    for digits in range(_ROLLOVER_DIGITS):
        power = power * (1 + 9 * (-reward > 10**digits))
    return reward + power


def stuck_timeout(
    *, reward: Any, game_over: Any, frame: Any, last_reward_frame: Any, max_frames: int
) -> Any:
    """The stuck timeout: ``max_frames`` emulator frames since the last non-zero reward
    (``last_reward_frame``, 0 at the reset), on a step that scored nothing and did not end
    the game. Any non-zero reward, positive or negative, restarts the count.

    Example:
        >>> stuck_timeout(reward=0.0, game_over=False, frame=18_000, last_reward_frame=0,
        ...               max_frames=18_000)
        True
    """
    return (reward == 0) & (game_over == 0) & (frame - last_reward_frame >= max_frames)


def frame_cap(*, game_over: Any, frame: Any, max_frames: int) -> Any:
    """The frame cap (100 hours in SABER): reached at ``frame >= max_frames`` unless the
    game ended on that step (then it is a game over)."""
    return (game_over == 0) & (frame >= max_frames)


def checkpoint_open(frame: Any, checkpoint: int) -> Any:
    """The score at a checkpoint (5 or 30 minutes) follows the score while ``frame`` is at
    or before it; after, it stays as it was."""
    return frame <= checkpoint


def end_code(*, game_over: Any, stuck: Any, capped: Any, xp: ModuleType = np) -> Any:
    """How episodes that ended on this step ended, as indices into :data:`END_REASONS`
    (arrays of rows, or scalars). The game's own end wins, then the stuck timeout, then
    the cap; an end by none of the SABER rules was a truncation from outside (a user
    wrapper)."""
    return xp.where(game_over, 0, xp.where(stuck, 1, xp.where(capped, 2, 3)))


def end_reason(*, game_over: bool, stuck: bool, capped: bool) -> EpisodeEnd:
    """How an episode that ended on this step ended (one row): see :func:`end_code`.

    Example:
        >>> end_reason(game_over=False, stuck=False, capped=True)
        <EpisodeEnd.TIME_CAP: 'time_cap'>
    """
    return END_REASONS[int(end_code(game_over=game_over, stuck=stuck, capped=capped))]


def is_infinite(end: Any, frames: Any) -> Any:
    """Infinite gameplay is SABER's notion: still playing after 100 hours. A shorter cap
    (a non-SABER override) ends episodes but proves nothing of the kind. ``end`` is an
    :class:`EpisodeEnd` (one row) or codes of :func:`end_code` (arrays)."""
    time_cap = EpisodeEnd.TIME_CAP
    capped = end == (time_cap if isinstance(end, str) else END_REASONS.index(time_cap))
    return capped & (frames >= SABER_CAP_FRAMES)


def episode_record(
    *,
    score: float,
    frames: int,
    steps: int,
    checkpoint_scores: dict[str, float],
    end: str,
    rollovers: int,
    seconds: float,
) -> EpisodeRecord:
    """The :class:`EpisodeRecord` of a finished episode (one row)."""
    return EpisodeRecord(
        score=float(score),
        checkpoints={name: float(value) for name, value in checkpoint_scores.items()},
        frames=int(frames),
        steps=int(steps),
        end=end,
        rollovers=int(rollovers),
        infinite=bool(is_infinite(end, int(frames))),
        seconds=float(seconds),
    )
