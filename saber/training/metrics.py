"""SABER's training-time numbers (mean of the last 100 episodes, scores at checkpoints),
kept episode by episode for whatever logger a training uses (docs/protocol.md).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable
from typing import Any

import numpy as np

from saber.protocol.limits import checkpoint_limits
from saber.protocol.training import TRAINING_CHECKPOINTS, WINDOW, checkpoint_label


class TrainingMetrics:
    """SABER's training-time numbers, kept up to date episode by episode.

    Feed it the cumulative training frames (:meth:`advance`) and each finished episode's
    record (:meth:`add`); :meth:`as_dict` gives the numbers. The checkpoint rule is
    :func:`training_scores`': at C frames, the mean of the last 100 episodes that ended
    at or before C.

    Args:
        game: ale id (for the world-record normalization).
        checkpoints: training frames at which to keep the score.
        window: episodes averaged (the protocol: 100).

    Example:
        >>> metrics = TrainingMetrics("pong", checkpoints=[10_000])
        >>> metrics.advance(6_000)
        >>> metrics.add({"score": -21.0, "end": "game_over", "infinite": False})
        >>> metrics.advance(14_000)
        >>> metrics.add({"score": -19.0, "end": "stuck_timeout", "infinite": False})
        >>> numbers = metrics.as_dict()
        >>> numbers["saber/mean_score"], numbers["saber/score_at_10k"]
        (-20.0, -21.0)
        >>> round(numbers["saber/mean_score_wr_normalized"], 2)  # random -20.34, record 21
        0.82
        >>> numbers["saber/stuck_episodes"], numbers["saber/frames"]
        (1.0, 14000.0)
    """

    def __init__(
        self, game: str, checkpoints: Iterable[int] = TRAINING_CHECKPOINTS, window: int = WINDOW
    ) -> None:
        self.game = game
        self.frames = 0
        self.episodes = 0
        self.infinite = 0
        self.stuck = 0
        self._fields = ["score", *(limit.record_field for limit in checkpoint_limits())]
        self._window: deque[tuple[float, ...]] = deque(maxlen=window)
        self._checkpoints: dict[int, float | None] = dict.fromkeys(sorted(checkpoints))
        self._reached: set[int] = set()

    def advance(self, frames: int) -> None:
        """The training has played ``frames`` emulator frames in all (cumulative)."""
        self.frames = int(frames)

    def add(self, episode: dict[str, Any]) -> None:
        """An episode (its SABER record) ended at the current :attr:`frames`."""
        self._capture(lambda checkpoint: checkpoint < self.frames)
        self._window.append(tuple(float(episode.get(key, math.nan)) for key in self._fields))
        self.episodes += 1
        self.infinite += bool(episode.get("infinite", False))
        self.stuck += episode.get("end") == "stuck_timeout"

    def _capture(self, passed: Any) -> None:
        for checkpoint in self._checkpoints:
            if checkpoint not in self._reached and passed(checkpoint):
                self._reached.add(checkpoint)
                self._checkpoints[checkpoint] = self._mean(0)

    def _mean(self, column: int) -> float | None:
        if not self._window:
            return None
        return float(np.mean([scores[column] for scores in self._window]))

    def as_dict(self) -> dict[str, float]:
        """The ``saber/...`` numbers; a mean is left out until an episode has ended.

        Keys: ``saber/frames``, ``saber/episodes``, ``saber/infinite_episodes``,
        ``saber/stuck_episodes``; ``saber/mean_score`` (raw, last 100 episodes),
        ``saber/mean_score_wr_normalized`` (percent of the world record; games with a
        record), ``saber/mean_score_5min``, ``saber/mean_score_30min``; and
        ``saber/score_at_10M`` ... ``saber/score_at_200M`` once the training passed them.
        """
        self._capture(lambda checkpoint: checkpoint <= self.frames)
        metrics: dict[str, float] = {
            "saber/frames": float(self.frames),
            "saber/episodes": float(self.episodes),
            "saber/infinite_episodes": float(self.infinite),
            "saber/stuck_episodes": float(self.stuck),
        }
        for column, field in enumerate(self._fields):
            mean = self._mean(column)
            if mean is not None:
                metrics[f"saber/mean_{field}"] = mean
        if "saber/mean_score" in metrics:
            normalized = _world_record_normalized(self.game, metrics["saber/mean_score"])
            if normalized is not None:
                metrics["saber/mean_score_wr_normalized"] = normalized
        for checkpoint, mean in self._checkpoints.items():
            if mean is not None:
                metrics[f"saber/score_at_{checkpoint_label(checkpoint)}"] = mean
        return metrics


def _world_record_normalized(game: str, score: float) -> float | None:
    from saber.scoring.normalize import normalize  # numpy only, but only when asked

    try:
        value = float(normalize([[score]], [game], "world_record")[0, 0])
    except Exception:  # a game outside the SABER tables
        return None
    return None if math.isnan(value) else value
