"""The SABER rules that act on rewards and episode ends, each written once (protocol 1, 2, 4).

Pure functions of the step's numbers. Each works on Python scalars (the single env's
wrappers call them with one step) and on numpy arrays of rows (the vector env calls them
with one row per sub-env) alike: comparisons and ``&`` only, no ``not``/``and``.

>>> is_rollover(-999_950.0, -100_000.0), correct_rollover(-999_950.0, "correct")
(True, 50.0)
>>> stuck_timeout(reward=0.0, game_over=False, frame=18_000, last_reward_frame=0, max_frames=18_000)
True
>>> end_reason(game_over=False, stuck=False, capped=True)
<EpisodeEnd.TIME_CAP: 'time_cap'>
"""

from __future__ import annotations

import math
from typing import Any

from saber.protocol.episode import EpisodeEnd, EpisodeRecord
from saber.protocol.settings import SABER_CAP_FRAMES

__all__ = [
    "SABER_CAP_FRAMES",
    "checkpoint_open",
    "correct_rollover",
    "end_reason",
    "episode_record",
    "frame_cap",
    "is_infinite",
    "is_rollover",
    "stuck_timeout",
]


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
    """
    if mode == "ignore":
        return 0.0
    if mode == "off":
        return reward
    return reward + 10.0 ** math.ceil(math.log10(-reward))


def stuck_timeout(
    *, reward: Any, game_over: Any, frame: Any, last_reward_frame: Any, max_frames: int
) -> Any:
    """The stuck timeout: ``max_frames`` emulator frames since the last non-zero reward
    (``last_reward_frame``, 0 at the reset), on a step that scored nothing and did not end
    the game. Any non-zero reward, positive or negative, restarts the count."""
    return (reward == 0) & (game_over == 0) & (frame - last_reward_frame >= max_frames)


def frame_cap(*, game_over: Any, frame: Any, max_frames: int) -> Any:
    """The frame cap (100 hours in SABER): reached at ``frame >= max_frames`` unless the
    game ended on that step (then it is a game over)."""
    return (game_over == 0) & (frame >= max_frames)


def checkpoint_open(frame: Any, checkpoint: int) -> Any:
    """The score at a checkpoint (5 or 30 minutes) follows the score while ``frame`` is at
    or before it; after, it stays as it was."""
    return frame <= checkpoint


def end_reason(*, game_over: bool, stuck: bool, capped: bool) -> EpisodeEnd:
    """How an episode that ended on this step ended (one row). The game's own end wins;
    an end by none of the SABER rules was a truncation from outside (a user wrapper)."""
    if game_over:
        return EpisodeEnd.GAME_OVER
    if stuck:
        return EpisodeEnd.STUCK_TIMEOUT
    if capped:
        return EpisodeEnd.TIME_CAP
    return EpisodeEnd.TRUNCATED


def is_infinite(end: str, frames: int) -> bool:
    """Infinite gameplay is SABER's notion: still playing after 100 hours. A shorter cap
    (a non-SABER override) ends episodes but proves nothing of the kind."""
    return end == EpisodeEnd.TIME_CAP and frames >= SABER_CAP_FRAMES


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
        infinite=is_infinite(end, int(frames)),
        seconds=float(seconds),
    )
